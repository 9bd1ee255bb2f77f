import type { V1Lease } from "@kubernetes/client-node";
import type { Clock } from "@tessera/core";
import type { RingView } from "./assignment.js";
import { ACKNOWLEDGED_EPOCH_ANNOTATION } from "./member-lease.js";

/** What the tracker knows of one member. */
export interface TrackedMember {
  readonly identity: string;
  /** The epoch the member last acknowledged. */
  readonly acknowledged: number | undefined;
  /** `clock.now()` when the tracker last saw the Lease change. */
  readonly changedAt: number;
  /** The Lease's duration, in milliseconds. */
  readonly leaseDurationMs: number;
}

/**
 * The coordinator's view of the ring's members, built from successive
 * listings of the member Leases. A member is live while its Lease is held and
 * the tracker has seen it change (a new resourceVersion) within its lease
 * duration plus `marginMs`, by the tracker's own monotonic clock; the
 * Lease's `renewTime`, written by another host's clock, is never compared.
 * A Lease handed back (holder cleared) or gone ends membership at once.
 *
 * A tracker that starts (a new coordinator) counts every held Lease as just
 * renewed, so a member that crashed just before is given a full lease
 * duration plus margin again: slower, never unsafe.
 */
export class MemberTracker {
  private readonly seen = new Map<string, { version: string; member: TrackedMember }>();

  constructor(
    private readonly clock: Clock,
    /** Extra wait past a Lease's duration before its member counts as gone (clock-rate and delivery slack). */
    readonly marginMs: number,
  ) {}

  /** Takes in a fresh listing of the ring's member Leases. */
  observe(leases: readonly V1Lease[]): void {
    const now = this.clock.now();
    const present = new Set<string>();
    for (const lease of leases) {
      const name = lease.metadata?.name;
      const holder = lease.spec?.holderIdentity;
      if (!name || !holder) continue;
      present.add(name);
      const version = lease.metadata?.resourceVersion ?? "";
      const before = this.seen.get(name);
      if (before && before.version === version && before.member.identity === holder) continue;
      const raw = lease.metadata?.annotations?.[ACKNOWLEDGED_EPOCH_ANNOTATION];
      const acked = raw === undefined ? undefined : Number(raw);
      this.seen.set(name, {
        version,
        member: {
          identity: holder,
          acknowledged: Number.isSafeInteger(acked) ? acked : undefined,
          changedAt: now,
          leaseDurationMs: (lease.spec?.leaseDurationSeconds ?? 0) * 1000,
        },
      });
    }
    for (const name of [...this.seen.keys()]) if (!present.has(name)) this.seen.delete(name);
  }

  /** The members that count as live now, sorted. */
  liveMembers(): string[] {
    const now = this.clock.now();
    const live = new Set<string>();
    for (const { member } of this.seen.values()) {
      if (now - member.changedAt <= member.leaseDurationMs + this.marginMs) live.add(member.identity);
    }
    return [...live].sort();
  }

  /**
   * The Leases no member holds any more, by name: handed back (holder
   * cleared), or held by a member that counts as gone (not renewed within its
   * duration plus the margin, so it has fenced itself long before). Nothing
   * reads them again, and every listing carries them, so they can be deleted.
   */
  leftBehind(leases: readonly V1Lease[]): Array<{ name: string; resourceVersion: string }> {
    const now = this.clock.now();
    const left: Array<{ name: string; resourceVersion: string }> = [];
    for (const lease of leases) {
      const name = lease.metadata?.name;
      const resourceVersion = lease.metadata?.resourceVersion;
      if (!name || !resourceVersion) continue;
      const seen = this.seen.get(name);
      const released = !lease.spec?.holderIdentity;
      const gone =
        seen !== undefined &&
        seen.version === resourceVersion &&
        now - seen.member.changedAt > seen.member.leaseDurationMs + this.marginMs;
      if (released || gone) left.push({ name, resourceVersion });
    }
    return left;
  }

  /** Everything known about each member, live or expired. */
  members(): TrackedMember[] {
    return [...this.seen.values()].map((s) => s.member);
  }

  /** The view {@link advanceAssignment} plans from. */
  view(): RingView {
    const members = this.liveMembers();
    const acks = new Map<string, number | undefined>();
    for (const { member } of this.seen.values()) acks.set(member.identity, member.acknowledged);
    return { members, acknowledged: (m) => acks.get(m) };
  }
}
