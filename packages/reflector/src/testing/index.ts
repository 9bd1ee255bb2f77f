/**
 * @tessera/reflector/testing: the fakes Tessera's own tests drive reflectors
 * and informers with, shipped for yours: a ListerWatcher the test answers call
 * by call, and an in-memory collection behind the ListerWatcher contract.
 */
export { ScriptedListerWatcher } from "./scripted-lister-watcher.js";
export type {
  ScriptedCall,
  ScriptedList,
  ScriptedListerWatcherOptions,
  ScriptedWatch,
} from "./scripted-lister-watcher.js";
export { InMemoryListerWatcher } from "./in-memory-lister-watcher.js";
export type {
  InMemoryListerWatcherOptions,
  InMemoryRequest,
  InMemoryWriteOptions,
  Selection,
} from "./in-memory-lister-watcher.js";
