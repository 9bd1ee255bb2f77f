/**
 * @tessera/runtime/predicates: filters on the events a controller's watches
 * deliver (controller-runtime's `predicate` package). Pass them in a watch's
 * options: `on.for(Widgets, { predicates: [generationChanged()] })`.
 */
export type { Predicate } from "./predicate/predicate.js";
export { admits } from "./predicate/predicate.js";
export {
  generationChanged,
  specOrMetadataChanged,
  labelsChanged,
  annotationsChanged,
  resourceVersionChanged,
  predicate,
  and,
  or,
  not,
} from "./predicate/predicates.js";
