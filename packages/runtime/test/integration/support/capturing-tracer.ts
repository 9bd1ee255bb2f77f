import type { Span, Tracer } from "@opentelemetry/api";

/** What a span recorded: its name, attributes, exceptions and status, as an exporter would ship them. */
export interface RecordedSpan {
  name: string;
  attributes: Record<string, unknown>;
  exceptions: Array<{ name: string; message: string; stack: string | undefined }>;
  status: unknown;
}

/**
 * A Tracer that keeps every span's exported fields in memory (the
 * OpenTelemetry SDK is not a dependency): what a trace backend would receive.
 */
export function capturingTracer(): { tracer: Tracer; spans: RecordedSpan[] } {
  const spans: RecordedSpan[] = [];
  const start = (name: string, options?: { attributes?: Record<string, unknown> }): Span => {
    const recorded: RecordedSpan = {
      name,
      attributes: { ...options?.attributes },
      exceptions: [],
      status: undefined,
    };
    spans.push(recorded);
    const span = {
      setAttribute: (key: string, value: unknown) => ((recorded.attributes[key] = value), span),
      setAttributes: (values: Record<string, unknown>) => (Object.assign(recorded.attributes, values), span),
      recordException: (error: Error) => {
        recorded.exceptions.push({ name: error.name, message: error.message, stack: error.stack });
      },
      setStatus: (status: unknown) => ((recorded.status = status), span),
      addEvent: () => span,
      updateName: () => span,
      end: () => {},
      isRecording: () => true,
      spanContext: () => ({ traceId: "0".repeat(32), spanId: "0".repeat(16), traceFlags: 1 }),
    };
    return span as unknown as Span;
  };
  const tracer: Tracer = {
    startSpan: start,
    startActiveSpan: (name: string, ...rest: unknown[]) => {
      const fn = rest[rest.length - 1] as (span: Span) => unknown;
      const options = rest.length > 1 ? (rest[0] as { attributes?: Record<string, unknown> }) : undefined;
      return fn(start(name, options));
    },
  };
  return { tracer, spans };
}
