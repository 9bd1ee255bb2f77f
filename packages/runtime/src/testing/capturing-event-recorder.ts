import type { KubeObject } from "@tessera/client";
import type { EventInput, EventRecorder } from "../client/event-recorder.js";

/** One Event a reconciler recorded, with the object it is about. */
export interface RecordedEvent extends EventInput {
  readonly regarding: KubeObject;
}

/** An {@link EventRecorder} that keeps the Events it is given, in order, for a test to read. */
export class CapturingEventRecorder implements EventRecorder {
  readonly events: RecordedEvent[] = [];

  record(regarding: KubeObject, event: EventInput): void {
    this.events.push({ regarding, ...event });
  }
}
