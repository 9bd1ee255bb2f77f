import { ApiClient, ConfigMaps, isNotFound, loadKubeConfig } from "@tessera/client";

// KUBECONFIG, the in-cluster service account, or ~/.kube/config.
const kubeConfig = await loadKubeConfig();
const client = new ApiClient(kubeConfig, { fieldManager: "example" });

// Server-side apply, typed by the handle: a misspelled field does not compile.
const applied = await client.apply(ConfigMaps, {
  metadata: { name: "settings", namespace: "default" },
  data: { mode: "fast" },
});
console.log(`applied ${applied.metadata?.name} at resourceVersion ${applied.metadata?.resourceVersion}`);

try {
  await client.patch(
    ConfigMaps,
    { name: "absent", namespace: "default" },
    { type: "merge", patch: { data: {} } },
  );
} catch (error) {
  // Every failure is an ApiError naming the verb, the resource and the object.
  if (!isNotFound(error)) throw error;
  console.log(error.message); // patch (merge) configmaps default/absent: 404 NotFound: ...
}
