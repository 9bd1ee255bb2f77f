// The cache's label selectors are the API server's: over a few thousand
// seeded selectors, biased to the grammar's edges (`in(` without a space,
// `>` and `<`, keys and values too long or malformed, empty requirements,
// keywords as keys and values, stray symbols), kube-apiserver and
// labelMatcher accept and refuse the same ones, and the accepted ones select
// the same ConfigMaps out of 300 labelled ones.
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { fuzzRuns } from "@tessera/core/testing/fuzz";
import { useControlPlane } from "@tessera/testenv";
import {
  ApiClient,
  ApiError,
  ConfigMaps,
  KubeTransport,
  LabelSelectorError,
  Namespaces,
  labelMatcher,
  type KubeObject,
} from "../../src/index.js";
import { KEYS, NUMBERS, WORDS, WRITTEN, selector } from "../label-selector-arbitraries.js";

const SEED = 29;
// FUZZ_RUNS raises it for a long local run, as for the fuzz targets.
const SELECTORS = fuzzRuns(2_000);
const OBJECTS = 300;
const NAMESPACE = "selector-parity";
const IN_FLIGHT = 8;

/** An object's labels: up to seven of the keys, each with a word or a number. */
const objectLabels = fc
  .array(
    fc.tuple(fc.constantFrom(...KEYS), fc.oneof(fc.constantFrom(...WORDS), fc.constantFrom(...NUMBERS))),
    { minLength: 2, maxLength: 7 },
  )
  .map((pairs) => Object.fromEntries(pairs));

type Verdict = { refused: true; why: string } | { refused: false; names: string[] };

describe("label selector parity with kube-apiserver (real API server)", function () {
  this.timeout(10 * 60_000);
  const env = useControlPlane();
  let transport: KubeTransport;
  let objects: KubeObject[];

  before(async () => {
    transport = new KubeTransport(env.cp.kubeConfig);
    const api = new ApiClient(env.cp.kubeConfig, { fieldManager: "selector-parity", transport });
    await api.create(Namespaces, { metadata: { name: NAMESPACE } });
    const all = fc.sample(objectLabels, { seed: SEED, numRuns: OBJECTS }).map((labels, i) => ({
      metadata: { name: `cm-${String(i).padStart(3, "0")}`, namespace: NAMESPACE, labels },
    }));
    await inPool(all, IN_FLIGHT, (cm) => api.create(ConfigMaps, cm));
    // The matcher reads what the server holds (kube-root-ca.crt included, if published).
    objects = await api.list(ConfigMaps, { namespace: NAMESPACE });
    assert.ok(objects.length >= OBJECTS);
  });

  after(() => transport?.close());

  it(`accepts, refuses and matches as the server does, over ${SELECTORS} seeded selectors and some written out`, async () => {
    const selectors = [...WRITTEN, ...fc.sample(selector, { seed: SEED, numRuns: SELECTORS })];
    const started = performance.now();
    const server = await inPool(selectors, IN_FLIGHT, (s) => serverVerdict(transport, s));
    const client = selectors.map((s) => clientVerdict(objects, s));

    const disagreements: string[] = [];
    let refusedByBoth = 0;
    let matchedSome = 0;
    selectors.forEach((s, i) => {
      const [a, b] = [server[i]!, client[i]!];
      if (a.refused && b.refused) refusedByBoth++;
      else if (!a.refused && !b.refused && a.names.join() === b.names.join()) {
        if (a.names.length > 0 && a.names.length < objects.length) matchedSome++;
      } else {
        disagreements.push(`${JSON.stringify(s)}: server ${verdictText(a)}, client ${verdictText(b)}`);
      }
    });
    const agree = selectors.length - disagreements.length;
    console.log(
      `      label selector parity: ${agree}/${selectors.length} agree (${refusedByBoth} refused by both, ` +
        `${agree - refusedByBoth} accepted by both, ${matchedSome} of those selecting some but not all) ` +
        `in ${Math.round(performance.now() - started)} ms`,
    );
    assert.deepEqual(disagreements.slice(0, 20), [], `${disagreements.length} selectors disagree`);
    // The sample must reach both sides of the grammar, or agreeing proves little.
    assert.ok(refusedByBoth > selectors.length / 10, `only ${refusedByBoth} refused`);
    assert.ok(matchedSome > selectors.length / 10, `only ${matchedSome} selected a proper subset`);
    for (const edge of ["in(", ">", "<"]) {
      const accepted = selectors.filter((s, i) => s.includes(edge) && !server[i]!.refused).length;
      assert.ok(accepted > 10, `only ${accepted} accepted selectors with ${JSON.stringify(edge)}`);
    }
  });

  it("refuses what the server refuses, saying where and what", async () => {
    for (const s of ["a=b,,c=d", "a=b,", "x>y", `k=${"v".repeat(64)}`, "Bad_Prefix.com/k", "a b"]) {
      const verdict = await serverVerdict(transport, s);
      assert.equal(verdict.refused, true, s);
      assert.throws(
        () => labelMatcher(s),
        (e: unknown) =>
          e instanceof LabelSelectorError && e.offset !== undefined && e.message.includes("offset"),
      );
    }
  });
});

async function serverVerdict(transport: KubeTransport, labelSelector: string): Promise<Verdict> {
  try {
    const list = await transport.call<{ items?: KubeObject[] }>(
      { verb: "list", resource: "configmaps", namespace: NAMESPACE },
      {
        method: "GET",
        path: `/api/v1/namespaces/${NAMESPACE}/configmaps`,
        query: new URLSearchParams({ labelSelector }),
      },
    );
    return { refused: false, names: (list.items ?? []).map((o) => o.metadata!.name!).sort() };
  } catch (error) {
    if (error instanceof ApiError && error.code === 400) return { refused: true, why: error.message };
    throw error;
  }
}

function clientVerdict(objects: readonly KubeObject[], labelSelector: string): Verdict {
  let matches: (labels: Readonly<Record<string, string>>) => boolean;
  try {
    matches = labelMatcher(labelSelector);
  } catch (error) {
    if (error instanceof LabelSelectorError) return { refused: true, why: error.message };
    throw error;
  }
  return {
    refused: false,
    names: objects
      .filter((o) => matches(o.metadata?.labels ?? {}))
      .map((o) => o.metadata!.name!)
      .sort(),
  };
}

function verdictText(v: Verdict): string {
  return v.refused ? `refuses (${v.why.slice(0, 160)})` : `selects ${v.names.length}`;
}

/** `work` over `items`, at most `width` at a time, results in order. */
async function inPool<I, O>(items: readonly I[], width: number, work: (item: I) => Promise<O>): Promise<O[]> {
  const results: O[] = new Array<O>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return results;
}
