// The README's unit-test example (examples/failover.test.ts) runs with the unit
// tests, so that what the README shows is not only compiled but true.
import "../examples/failover.test.js";
