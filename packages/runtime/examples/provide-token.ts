import { Manager, token, type ManagedRunnable } from "@tessera/runtime";

/** A service of the operator's own, injected into its plugins. */
interface Pricing {
  priceOf(sku: string): Promise<number>;
}
const PricingToken = token<Pricing>("shop.Pricing");

/** Reports a price once, on the leader, from the Pricing it was given. */
class PriceReporter implements ManagedRunnable {
  static readonly inject = [PricingToken] as const;
  constructor(private readonly pricing: Pricing) {}
  async run(): Promise<void> {
    console.log("a widget costs", await this.pricing.priceOf("widget"));
  }
}

export async function createManager(): Promise<Manager> {
  const manager = await Manager.create();
  // Without provide, run() rejects before starting: PriceReporter.inject[0] (shop.Pricing) is bound to nothing.
  return manager.provide(PricingToken, { priceOf: () => Promise.resolve(42) }).register(PriceReporter);
}
