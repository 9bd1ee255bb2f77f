import { KubeConfig } from "@kubernetes/client-node";
import { createDequeueGuard, MemberFencedError, RingCoordinator, ShardMember } from "@tessera/sharding";
import { SlotSpace, type ShardKeySource } from "@tessera/sharding/ranges";

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const ring = {
  kubeConfig,
  namespace: "operators",
  ring: "widgets",
  identity: process.env.POD_NAME ?? "widgets-0",
};
/** The controller's cache by queue key (an informer's lister in a real operator). */
const cache = new Map<string, ShardKeySource>();

const member = new ShardMember({
  ...ring,
  onAssignment: ({ epoch, gained, lost }) => {
    console.log(`epoch ${epoch}: ${gained.size} slots gained, ${lost.size} lost`);
    // Resolve once the reconciles of the lost slots have ended: only then may they move to another member.
  },
});
const coordinator = new RingCoordinator(ring); // every replica runs one; the elected one publishes assignments

// Workers ask on every dequeued key: keys of slots this member does not own (now) are dropped.
export const mayProcess = createDequeueGuard({
  space: new SlotSpace(256),
  field: "object.metadata.uid",
  ownedSlots: () => member.activeSlots,
  lookup: (key) => cache.get(key),
});

const shutdown = new AbortController();
process.once("SIGTERM", () => shutdown.abort());
member.fence.addEventListener("abort", () => {
  const why: unknown = member.fence.reason;
  // Could not renew in time: its slots may go elsewhere soon, so stop everything now.
  if (why instanceof MemberFencedError && why.reason === "renewDeadlineExceeded") process.exit(1);
});
// Rejects if the member Lease cannot be taken. On SIGTERM the member gives up its slots
// (onAssignment, all lost) and hands its Lease back, so they move in about a second.
const running = Promise.all([member.run(shutdown.signal), coordinator.run(shutdown.signal)]);
if (await member.joined()) console.log(`${ring.identity} joined ring ${ring.ring}`);
await running;
