import type { V1Lease } from "@kubernetes/client-node";
import type { Clock } from "@tessera/core";
import type { RingView } from "./assignment.js";
import { ACKNOWLEDGED_EPOCH_ANNOTATION } from "./member-lease.js";

/** How many superseded versions of a Lease the tracker remembers, to know them when a copy that is behind shows them again. */
const EARLIER_VERSIONS = 8;

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
 *
 * A copy of the Leases that may be behind (a watch's, which stops moving
 * while the watch is down) is observed as partial: it can show a member
 * renewed, acknowledging or joining, never leaving. Whether a member left is
 * only decided on a complete, fresh listing ({@link MemberTracker.losesMembers}
 * says when one is needed): read from a stale copy, every member would look
 * expired, and their slots would move while they still work on them.
 */
export class MemberTracker {
  /** Per Lease name: the latest version seen, a few before it (old news if shown again), and the member. */
  private readonly seen = new Map<string, { version: string; earlier: string[]; member: TrackedMember }>();

  constructor(
    private readonly clock: Clock,
    /** Extra wait past a Lease's duration before its member counts as gone (clock-rate and delivery slack). */
    readonly marginMs: number,
  ) {}

  /**
   * Takes in a listing of the ring's member Leases. `complete` (the default):
   * a fresh listing of all of them, so a Lease it leaves out, or shows handed
   * back, ends that membership. Partial: a copy that may be behind, which
   * only adds what it shows; a version of a Lease seen before is old news.
   */
  observe(leases: readonly V1Lease[], { complete = true }: { complete?: boolean } = {}): void {
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
      if (!complete && before?.earlier.includes(version)) continue;
      const raw = lease.metadata?.annotations?.[ACKNOWLEDGED_EPOCH_ANNOTATION];
      const acked = raw === undefined ? undefined : Number(raw);
      this.seen.set(name, {
        version,
        earlier: before ? [before.version, ...before.earlier].slice(0, EARLIER_VERSIONS) : [],
        member: {
          identity: holder,
          acknowledged: Number.isSafeInteger(acked) ? acked : undefined,
          changedAt: now,
          leaseDurationMs: (lease.spec?.leaseDurationSeconds ?? 0) * 1000,
        },
      });
    }
    if (complete) for (const name of [...this.seen.keys()]) if (!present.has(name)) this.seen.delete(name);
  }

  /**
   * Whether a listing that may be behind would end a membership if taken as
   * complete: a member whose Lease it leaves out or shows handed back, or a
   * member not seen renewed within its duration plus the margin. Then only a
   * fresh listing may decide.
   */
  losesMembers(leases: readonly V1Lease[]): boolean {
    const held = new Set<string>();
    for (const lease of leases)
      if (lease.metadata?.name && lease.spec?.holderIdentity) held.add(lease.metadata.name);
    const now = this.clock.now();
    for (const [name, { member }] of this.seen) {
      if (!held.has(name)) return true;
      if (now - member.changedAt > member.leaseDurationMs + this.marginMs) return true;
    }
    return false;
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
