// The operator's reconcilers, listed once: main.ts registers each one, and
// `tessera generate` derives the RBAC from what each declares. A class with
// controller() and reconcile() methods that is missing here is an error from
// generate; `tessera create api` adds the reconciler it creates.
import { __KIND__Reconciler } from "./__SINGULAR__.js";

export const reconcilers = [__KIND__Reconciler] as const;
