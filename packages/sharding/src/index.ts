export { fnv1a64, fnv1a64Hex, fnv1a64Words } from "./fnv1a64.js";
export type { Hash64 } from "./fnv1a64.js";
