import type { KubeObject } from "@tessera/client";
import { toError } from "@tessera/core";
import type { ConversionRequest, ConversionResponse } from "./conversion-review.js";
import type { Conversion } from "./conversion.js";

/** Why one object could not be converted: the review fails with this message. */
class ConversionFailure extends Error {}

/**
 * Answers ConversionReviews for the kinds of the registered conversions:
 * each object goes from its version to the hub (`toHub`, unless it is the
 * hub) and from the hub to the desired version (`fromHub`, unless that is
 * the hub), so spoke to spoke passes through the hub. The result keeps the
 * object's metadata (the API server allows a conversion to change only
 * labels and annotations) and takes the desired `apiVersion`. A kind or
 * version it does not know, or a function that throws, fails the whole
 * review with a message naming the object and what to do.
 */
export class Converter {
  private readonly byKind = new Map<string, Conversion>();

  constructor(conversions: readonly Conversion[]) {
    for (const conversion of conversions) {
      const key = `${conversion.hub.group}/${conversion.hub.kind}`;
      if (this.byKind.has(key)) {
        throw new TypeError(
          `two conversions for ${conversion.hub.kind} (${conversion.hub.group}): register one defineConversion per kind`,
        );
      }
      this.byKind.set(key, conversion);
    }
  }

  /** The response to `request`; never rejects. */
  convert(request: ConversionRequest): ConversionResponse {
    try {
      const convertedObjects = request.objects.map((object) =>
        this.convertOne(object, request.desiredAPIVersion),
      );
      return { uid: request.uid, convertedObjects, result: { status: "Success" } };
    } catch (error) {
      return {
        uid: request.uid,
        convertedObjects: [],
        result: { status: "Failure", message: toError(error).message },
      };
    }
  }

  private convertOne(object: KubeObject, desiredAPIVersion: string): KubeObject {
    const [group, from] = splitApiVersion(object.apiVersion!);
    const [desiredGroup, to] = splitApiVersion(desiredAPIVersion);
    const name = object.metadata?.namespace
      ? `${object.metadata.namespace}/${object.metadata.name ?? ""}`
      : (object.metadata?.name ?? "");
    const what = `${object.kind!} ${name} from ${object.apiVersion!} to ${desiredAPIVersion}`;
    const conversion = this.byKind.get(`${group}/${object.kind!}`);
    if (!conversion) {
      const known = [...this.byKind.keys()].join(", ") || "none";
      throw new ConversionFailure(
        `cannot convert ${what}: no conversion is registered for kind ${object.kind!} of group ${group} (registered: ${known}); ` +
          `register defineConversion(<its hub resource>, {...}) with the manager`,
      );
    }
    if (desiredGroup !== group) {
      throw new ConversionFailure(`cannot convert ${what}: a conversion stays within the group ${group}`);
    }
    const hub = conversion.hub.version;
    for (const version of [from, to]) {
      if (version !== hub && !Object.hasOwn(conversion.spokes, version)) {
        const known = [`${hub} (hub)`, ...Object.keys(conversion.spokes)].join(", ");
        throw new ConversionFailure(
          `cannot convert ${what}: unknown version ${version} of ${object.kind!} (the conversion knows ${known}); ` +
            `add ${version}: { toHub, fromHub } to its defineConversion`,
        );
      }
    }
    if (from === to) return object;
    try {
      let hubObject: KubeObject = structuredClone(object);
      if (from !== hub)
        hubObject = { ...conversion.spokes[from]!.toHub(hubObject), apiVersion: `${group}/${hub}` };
      const converted = to === hub ? hubObject : conversion.spokes[to]!.fromHub(structuredClone(hubObject));
      return withIdentity(converted, object, desiredAPIVersion);
    } catch (error) {
      throw new ConversionFailure(`cannot convert ${what}: ${toError(error).message}`, { cause: error });
    }
  }
}

/** `converted` with the desired apiVersion, the source's kind, and the source's metadata but for labels and annotations. */
function withIdentity(converted: KubeObject, source: KubeObject, apiVersion: string): KubeObject {
  if (!source.metadata) return { ...converted, apiVersion, kind: source.kind! };
  const metadata = { ...source.metadata };
  if (converted.metadata) {
    delete metadata.labels;
    delete metadata.annotations;
    if (converted.metadata.labels !== undefined) metadata.labels = converted.metadata.labels;
    if (converted.metadata.annotations !== undefined) metadata.annotations = converted.metadata.annotations;
  }
  return { ...converted, apiVersion, kind: source.kind!, metadata };
}

function splitApiVersion(apiVersion: string): [string, string] {
  const slash = apiVersion.lastIndexOf("/");
  return slash < 0 ? ["", apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}
