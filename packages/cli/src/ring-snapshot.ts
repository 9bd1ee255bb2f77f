import { ConfigMaps, Leases } from "@tessera/client";
import type { ApiClient } from "@tessera/client";
import {
  ACKNOWLEDGED_EPOCH_ANNOTATION,
  OBJECTS_CACHED_ANNOTATION,
  RING_LABEL,
  SERVER_FILTERING_ANNOTATION,
} from "@tessera/sharding";
import { decodeAssignment, encodeAssignment, type Assignment } from "@tessera/sharding/ranges";

/** One ring member as its Lease says. */
export interface MemberSnapshot {
  readonly identity: string;
  /** Whether the Lease is held (a member that left hands it back). */
  readonly holding: boolean;
  readonly acknowledgedEpoch?: number;
  readonly objectsCached?: number;
  readonly serverFiltering?: boolean;
}

/** A ring as published: its assignment and its members, as `tessera shards` draws and prints it. */
export interface RingSnapshot {
  readonly ring: string;
  readonly namespace: string;
  /** Who coordinates (holds the `<ring>` Lease), if anyone. */
  readonly coordinator?: string;
  readonly assignment: Assignment;
  readonly members: readonly MemberSnapshot[];
}

/** The JSON `tessera shards --json` prints for one ring; `assignment` is the published encoding, parsed. */
export interface RingJson {
  ring: string;
  namespace: string;
  coordinator: string | null;
  assignment: {
    epoch: number;
    slotCount: number;
    owners: [number, number, string | null][];
    releasing: [number, number, number][];
  };
  members: {
    identity: string;
    holding: boolean;
    slots: number;
    releasing: number;
    acknowledgedEpoch: number | null;
    objectsCached: number | null;
    serverFiltering: boolean | null;
  }[];
}

/** Reads every ring in `namespace` (or only `ring`): assignment ConfigMaps, member Leases and the coordinator's Lease. */
export async function readRings(
  client: ApiClient,
  namespace: string,
  ring?: string,
): Promise<RingSnapshot[]> {
  const labels = ring ? `${RING_LABEL}=${ring}` : RING_LABEL;
  const [configMaps, leases] = await Promise.all([
    client.list(ConfigMaps, { namespace, labels }),
    client.list(Leases, { namespace, labels }),
  ]);
  const rings: RingSnapshot[] = [];
  for (const cm of configMaps.sort((a, b) =>
    (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""),
  )) {
    const name = cm.metadata?.labels?.[RING_LABEL];
    if (!name) continue;
    const assignment = decodeAssignment(cm.data, `ConfigMap ${namespace}/${cm.metadata?.name}`);
    const coordinatorLease = await client.get(Leases, { namespace, name });
    const members = leases
      .filter((l) => l.metadata?.labels?.[RING_LABEL] === name)
      .map((l): MemberSnapshot => {
        const a = l.metadata?.annotations ?? {};
        const identity = l.spec?.holderIdentity || (l.metadata?.name ?? "").slice(name.length + 1);
        return {
          identity,
          holding: !!l.spec?.holderIdentity,
          ...numberField("acknowledgedEpoch", a[ACKNOWLEDGED_EPOCH_ANNOTATION]),
          ...numberField("objectsCached", a[OBJECTS_CACHED_ANNOTATION]),
          ...(a[SERVER_FILTERING_ANNOTATION] !== undefined
            ? { serverFiltering: a[SERVER_FILTERING_ANNOTATION] === "true" }
            : {}),
        };
      });
    // An owner in the assignment whose Lease is gone is still drawn, so nothing owned goes unseen.
    for (const owner of new Set(assignment.owners)) {
      if (owner !== undefined && !members.some((m) => m.identity === owner))
        members.push({ identity: owner, holding: false });
    }
    const holder = coordinatorLease?.spec?.holderIdentity;
    rings.push({
      ring: name,
      namespace,
      ...(holder ? { coordinator: holder } : {}),
      assignment,
      members: members.sort((a, b) => a.identity.localeCompare(b.identity)),
    });
  }
  return rings;
}

function numberField<K extends string>(key: K, value: string | undefined): Partial<Record<K, number>> {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) ? ({ [key]: n } as Record<K, number>) : {};
}

/** The snapshot as `--json` prints it. */
export function ringToJson(s: RingSnapshot): RingJson {
  const encoded = encodeAssignment(s.assignment);
  return {
    ring: s.ring,
    namespace: s.namespace,
    coordinator: s.coordinator ?? null,
    assignment: {
      epoch: s.assignment.epoch,
      slotCount: s.assignment.owners.length,
      owners: JSON.parse(encoded["owners"]!) as RingJson["assignment"]["owners"],
      releasing: JSON.parse(encoded["releasing"]!) as RingJson["assignment"]["releasing"],
    },
    members: s.members.map((m) => ({
      identity: m.identity,
      holding: m.holding,
      slots: s.assignment.owners.filter((o) => o === m.identity).length,
      releasing: [...s.assignment.releasing.keys()].filter((slot) => s.assignment.owners[slot] === m.identity)
        .length,
      acknowledgedEpoch: m.acknowledgedEpoch ?? null,
      objectsCached: m.objectsCached ?? null,
      serverFiltering: m.serverFiltering ?? null,
    })),
  };
}

/** The assignment back from `--json` output (what a script would do with it). */
export function assignmentFromJson(json: RingJson): Assignment {
  return decodeAssignment(
    {
      epoch: String(json.assignment.epoch),
      slotCount: String(json.assignment.slotCount),
      owners: JSON.stringify(json.assignment.owners),
      releasing: JSON.stringify(json.assignment.releasing),
    },
    `tessera shards --json output for ring ${json.ring}`,
  );
}
