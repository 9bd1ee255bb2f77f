import { strict as assert } from "node:assert";
import {
  formatGoDuration,
  LengthDelimitedFrames,
  PROTOBUF_MAGIC,
  ProtobufCodec,
  ProtobufDecodeError,
} from "../src/index.js";
import { type KubeObject } from "@tessera/client";
import { ShapeDecoder } from "../src/proto/shape-decoder.js";
import { delimited, encode, enveloped, root, type, varint } from "./support/protobuf-wire.js";

const frame = (payload: Buffer) => {
  const header = Buffer.alloc(4);
  header.writeUInt32BE(payload.length);
  return Buffer.concat([header, payload]);
};

describe("LengthDelimitedFrames (the protobuf watch stream's framing)", () => {
  it("yields each frame however the chunks split it", () => {
    const payloads = [Buffer.from("a"), Buffer.alloc(0), Buffer.from("hello, world"), Buffer.alloc(300, 9)];
    const stream = Buffer.concat(payloads.map(frame));
    for (const size of [1, 3, 7, stream.length]) {
      const got: Buffer[] = [];
      const frames = new LengthDelimitedFrames((f) => got.push(Buffer.from(f)));
      for (let i = 0; i < stream.length; i += size) frames.write(stream.subarray(i, i + size));
      frames.end();
      assert.deepEqual(got, payloads, `chunks of ${size}`);
    }
  });

  it("says the stream ended inside a frame", () => {
    const frames = new LengthDelimitedFrames(() => {});
    frames.write(frame(Buffer.from("whole")).subarray(0, 6));
    assert.throws(
      () => frames.end(),
      (e: unknown) => e instanceof ProtobufDecodeError && /inside a frame/.test(e.message),
    );
  });

  it("refuses a frame that claims an absurd length", () => {
    const frames = new LengthDelimitedFrames(() => {});
    assert.throws(
      () => frames.write(Buffer.from([0xff, 0xff, 0xff, 0xff, 1])),
      (e: unknown) => e instanceof ProtobufDecodeError && /bytes long/.test(e.message),
    );
  });
});

describe("ProtobufCodec", () => {
  const codec = new ProtobufCodec();
  // The API versions whose objects the cases below decode.
  before(() => Promise.all([codec.load("v1"), codec.load("certificates.k8s.io/v1")]));

  it("refuses bytes without the Kubernetes magic, saying what they open with", () => {
    assert.throws(
      () => codec.decodeObject(Buffer.from('{"kind":"ConfigMap"}')),
      (e: unknown) => e instanceof ProtobufDecodeError && /7b226b69, not 6b387300/.test(e.message),
    );
  });

  it("refuses a truncated object and a kind it does not know", () => {
    assert.throws(
      () => codec.decodeObject(Buffer.concat([PROTOBUF_MAGIC, Buffer.from([0x0a, 0x50, 0x01])])),
      (e: unknown) => e instanceof ProtobufDecodeError && /could not be decoded/.test(e.message),
    );
    assert.equal(codec.messageFor("v1", "ConfigMap"), "k8s.io.api.core.v1.ConfigMap");
    assert.equal(codec.messageFor("example.com/v1", "Widget"), undefined);
  });

  it("formats durations as Go does", () => {
    assert.equal(formatGoDuration(0), "0s");
    assert.equal(formatGoDuration(1_500_000_000), "1.5s");
    assert.equal(formatGoDuration(3_723_000_000_000), "1h2m3s");
    assert.equal(formatGoDuration(150_000_000), "150ms");
    assert.equal(formatGoDuration(60_000_000_000), "1m0s");
  });

  const CORE = "k8s.io.api.core.v1";
  const META = "k8s.io.apimachinery.pkg.apis.meta.v1";
  const id = (message: string, field: string) => type(message).fields[field]!.id;
  const configMap = (raw: Buffer) => enveloped("v1", "ConfigMap", `${CORE}.ConfigMap`, raw);
  const pod = (raw: Buffer) => enveloped("v1", "Pod", `${CORE}.Pod`, raw);

  it("holds a kind's messages once loaded, says so before, and decodes a Status without", async () => {
    const fresh = new ProtobufCodec();
    const bytes = enveloped("apps/v1", "Deployment", "k8s.io.api.apps.v1.Deployment", {
      metadata: { name: "web" },
      spec: { replicas: 2, template: { spec: { containers: [{ name: "web", image: "nginx" }] } } },
    });
    const notLoaded = (apiVersion: string, kind: string) => (e: unknown) =>
      e instanceof ProtobufDecodeError &&
      e.message.includes(
        `${apiVersion} ${kind} is not loaded: await codec.load("${apiVersion}", ["${kind}"])`,
      );
    assert.throws(() => fresh.decodeObject(bytes), notLoaded("apps/v1", "Deployment"));
    const status = enveloped("v1", "Status", `${META}.Status`, {
      status: "Failure",
      code: 410,
      reason: "Expired",
    });
    assert.deepEqual(fresh.decodeStatus(status), {
      apiVersion: "v1",
      kind: "Status",
      metadata: {},
      status: "Failure",
      reason: "Expired",
      code: 410,
    });
    await Promise.all([fresh.load("apps/v1", ["Deployment"]), fresh.load("example.com/v1", ["Widget"])]);
    const deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web" },
      spec: {
        replicas: 2,
        selector: null,
        template: { metadata: {}, spec: { containers: [{ name: "web", image: "nginx", resources: {} }] } },
        strategy: {},
      },
      status: {},
    };
    assert.deepEqual(fresh.decodeObject(bytes), deployment);
    // A Deployment's pod template is loaded with it; the Pod, a kind of its own, is not.
    const podBytes = pod(encode(`${CORE}.Pod`, { metadata: { name: "p" } }));
    assert.throws(() => fresh.decodeObject(podBytes), notLoaded("v1", "Pod"));
    await fresh.load("v1", ["Pod"]);
    assert.deepEqual(fresh.decodeObject(podBytes), codec.decodeObject(podBytes));
    assert.deepEqual(fresh.decodeObject(bytes), deployment);
  });

  it("skips fields it does not know, of every wire type, at any depth", () => {
    const unknown = Buffer.concat([
      varint((90 << 3) | 0),
      varint(2n ** 63n), // varint, 10 bytes
      varint((91 << 3) | 1),
      Buffer.alloc(8, 7), // fixed64
      delimited(92, Buffer.from("not a field this codec knows")),
      varint((93 << 3) | 5),
      Buffer.alloc(4, 9), // fixed32
      varint((94 << 3) | 3),
      varint((1 << 3) | 0),
      varint(5),
      varint((94 << 3) | 4), // a group
    ]);
    const meta = encode(`${META}.ObjectMeta`, { name: "a", labels: { app: "x" } });
    const data = encode(`${CORE}.ConfigMap`, { data: { k: "v" } });
    const plain = codec.decodeObject(configMap(Buffer.concat([delimited(1, meta), data])));
    const noisy = codec.decodeObject(
      configMap(
        Buffer.concat([unknown, delimited(1, Buffer.concat([unknown, meta, unknown])), data, unknown]),
      ),
    );
    assert.deepEqual(noisy, plain);
    assert.deepEqual(plain, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", labels: { app: "x" } },
      data: { k: "v" },
    });
  });

  it("reads repeated numbers packed and unpacked alike, int64 as a JS number", () => {
    const context = (groups: Buffer) =>
      pod(
        delimited(
          id(`${CORE}.Pod`, "spec"),
          delimited(
            id(`${CORE}.PodSpec`, "securityContext"),
            Buffer.concat([groups, varint(id(`${CORE}.PodSecurityContext`, "runAsUser") << 3), varint(-1)]),
          ),
        ),
      );
    const field = id(`${CORE}.PodSecurityContext`, "supplementalGroups");
    const values = [1, 0, 2 ** 40];
    const unpacked = Buffer.concat(values.map((v) => Buffer.concat([varint(field << 3), varint(v)])));
    const packed = delimited(field, Buffer.concat(values.map((v) => varint(v))));
    for (const groups of [unpacked, packed, Buffer.concat([packed, unpacked])]) {
      const spec = codec.decodeObject<{ spec: { securityContext: unknown } } & KubeObject>(
        context(groups),
      ).spec;
      assert.deepEqual(spec.securityContext, {
        runAsUser: -1,
        supplementalGroups: groups === unpacked || groups === packed ? values : [...values, ...values],
      });
    }
  });

  it("gives back every string as written, short ones shared or not, ASCII or not, across objects", () => {
    // Short ASCII strings come from a table found by a hash of their bytes; the others are decoded
    // each time. Values that differ in one byte, or only in length, must not be taken for each other.
    const values = [
      "",
      "a",
      "b",
      "ab",
      "ba",
      "é",
      "naïve",
      "日本",
      "x".repeat(32),
      "x".repeat(33),
      "y".repeat(200),
    ];
    for (let round = 0; round < 3; round++) {
      for (const [i, value] of values.entries()) {
        const data = { [value]: value, [`k${i}`]: `${value}${round}` };
        const bytes = enveloped("v1", "ConfigMap", `${CORE}.ConfigMap`, {
          metadata: { name: value || "n", labels: { v: value } },
          data,
        });
        const cm = codec.decodeObject<{ data: Record<string, string> } & KubeObject>(bytes);
        assert.deepEqual(cm.metadata, { name: value || "n", labels: { v: value } });
        assert.deepEqual(cm.data, data);
      }
    }
  });

  it("decodes a watch frame's object in place, as the same object enveloped alone", () => {
    const object = enveloped("v1", "ConfigMap", `${CORE}.ConfigMap`, {
      metadata: { name: "a", resourceVersion: "7" },
      data: { k: "v" },
    });
    for (const type of ["ADDED", "MODIFIED", "ADDED"]) {
      const event = codec.decodeWatchEvent(encode(`${META}.WatchEvent`, { type, object: { raw: object } }));
      assert.deepEqual(event, { type, object: codec.decodeObject(object) });
    }
    assert.throws(
      () => codec.decodeWatchEvent(encode(`${META}.WatchEvent`, { type: "ADDED" })),
      (e: unknown) => e instanceof ProtobufDecodeError && /without an object/.test(e.message),
    );
  });

  it("refuses a varint cut short, and a field that runs past its message, naming the message", () => {
    const meta = encode(`${META}.ObjectMeta`, { name: "a" });
    const generation = varint(id(`${META}.ObjectMeta`, "generation") << 3);
    const cutShort = configMap(delimited(1, Buffer.concat([meta, generation, Buffer.from([0xff, 0xff])])));
    // metadata says 3 bytes, and its name says 10: the name runs into the fields after metadata.
    const overrun = configMap(
      Buffer.concat([
        Buffer.from([0x0a, 0x03, 0x0a, 0x0a, 0x61]),
        encode(`${CORE}.ConfigMap`, { data: { k: "v" } }),
      ]),
    );
    for (const bytes of [cutShort, overrun]) {
      assert.throws(
        () => codec.decodeObject(bytes),
        (e: unknown) =>
          e instanceof ProtobufDecodeError &&
          /k8s\.io\.api\.core\.v1\.ConfigMap could not be decoded/.test(e.message),
      );
    }
  });

  it("decodes an ephemeral container's common fields (embedded, and unnamed in the shapes)", () => {
    const bytes = enveloped("v1", "Pod", `${CORE}.Pod`, {
      metadata: { name: "p" },
      spec: {
        ephemeralContainers: [
          { ephemeralContainerCommon: { name: "debug", image: "busybox" }, targetContainerName: "web" },
        ],
      },
    });
    const { spec } = codec.decodeObject<
      { spec: { ephemeralContainers: Record<string, unknown>[] } } & KubeObject
    >(bytes);
    assert.equal(spec.ephemeralContainers[0]?.["name"], "debug");
    assert.equal(spec.ephemeralContainers[0]?.["image"], "busybox");
    assert.equal(spec.ephemeralContainers[0]?.["targetContainerName"], "web");
  });

  it("gives a map of wrapped lists (a CSR's extra) as JSON does, and a __proto__ key as an own key", () => {
    const csr = codec.decodeObject<{ spec: Record<string, unknown> } & KubeObject>(
      enveloped(
        "certificates.k8s.io/v1",
        "CertificateSigningRequest",
        "k8s.io.api.certificates.v1.CertificateSigningRequest",
        {
          spec: { signerName: "s", extra: { scopes: { items: ["a", "b"] }, none: { items: [] } } },
        },
      ),
    );
    assert.deepEqual(csr.spec["extra"], { scopes: ["a", "b"], none: null });
    const entry = Buffer.concat([delimited(1, Buffer.from("__proto__")), delimited(2, Buffer.from("x"))]);
    const cm = codec.decodeObject<{ data: unknown } & KubeObject>(
      configMap(delimited(id(`${CORE}.ConfigMap`, "data"), entry)),
    );
    assert.deepStrictEqual(cm.data, JSON.parse('{"__proto__":"x"}'));
  });

  it("compiles every message the shapes name against the descriptor (the generated files agree)", async () => {
    const { shapes } = await ProtobufCodec.readFiles();
    const decoder = new ShapeDecoder(root, shapes);
    // InternalEvent is a Go type of the watch machinery with no protobuf message.
    const names = Object.keys(shapes.messages).filter((name) => root.lookup(name) !== null);
    assert.ok(names.length > 1000);
    for (const name of names) decoder.compile(name);
  });
});
