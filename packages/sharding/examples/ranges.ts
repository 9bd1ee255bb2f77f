import {
  planSlots,
  ShardSelector,
  ShardSelectorError,
  SlotSpace,
  withShardSelector,
} from "@tessera/sharding/ranges";

const space = new SlotSpace(256);
const members = ["pod-a", "pod-b", "pod-c"];
const plan = planSlots(new Array<string | undefined>(256).fill(undefined), members); // first start
const joined = planSlots(plan.owners, [...members, "pod-d"]);
console.log(`pod-d joins: ${joined.moved} of 256 slots move`); // 64: a quarter, not the half an equal re-split moves

const mine = plan.owners.flatMap((owner, slot) => (owner === "pod-b" ? [slot] : []));
const selector = space.selectorFor("object.metadata.uid", mine);
console.log(selector.toString());
// shardRange(object.metadata.uid, '0x5600000000000000', '0xab00000000000000')

// The validated parameter on a LIST or WATCH path. A LIST the server filtered echoes the selector in
// metadata.shardInfo.selector; without it (gate off, older server) filter client-side with the same hash:
console.log(withShardSelector("/api/v1/namespaces/default/configmaps", selector));
export const isMine = (cm: { metadata?: { uid?: string } }): boolean => selector.matchesObject(cm);

try {
  ShardSelector.parse("shardRange(object.metadata.uid, '0x0', '0x8000000000000000')");
} catch (error) {
  // invalid shard selector "...": start bound '0x0' must have exactly 16 hex digits after 0x
  // (did you mean '0x0000000000000000'?) (at character 32); accepted form: ...
  if (error instanceof ShardSelectorError) console.log(error.message);
}
