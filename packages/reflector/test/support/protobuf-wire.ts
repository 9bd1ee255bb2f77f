import protobuf from "protobufjs";
import { PROTOBUF_MAGIC, ProtobufCodec } from "../../src/index.js";

/** The codec's own descriptor, to encode test messages with protobufjs. */
export const root = protobuf.Root.fromJSON((await ProtobufCodec.readFiles()).descriptor);
export const type = (name: string): protobuf.Type => root.lookupType(name);

/** `message` encoded from a plain object. */
export const encode = (name: string, value: object): Buffer =>
  Buffer.from(type(name).encode(type(name).fromObject(value)).finish());

/** An object as the API server sends it: the magic, then a runtime.Unknown around the message. */
export function enveloped(apiVersion: string, kind: string, name: string, value: object | Buffer): Buffer {
  const raw = Buffer.isBuffer(value) ? value : encode(name, value);
  return Buffer.concat([
    PROTOBUF_MAGIC,
    encode("k8s.io.apimachinery.pkg.runtime.Unknown", { typeMeta: { apiVersion, kind }, raw }),
  ]);
}

/** A varint's bytes. */
export function varint(n: number | bigint): Buffer {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    const low = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v > 0n ? low | 0x80 : low);
  } while (v > 0n);
  return Buffer.from(out);
}

/** A length-delimited field's bytes. */
export const delimited = (field: number, bytes: Buffer): Buffer =>
  Buffer.concat([varint((field << 3) | 2), varint(bytes.length), bytes]);
