/** No cluster could be found, or a kubeconfig cannot be used; says where it looked. */
export class KubeConfigError extends Error {
  override name = "KubeConfigError";
  readonly exitCode = 2;
}
