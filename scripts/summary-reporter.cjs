// Mocha reporter: the usual spec output, then one closing line
// "N passed, N failed[, N skipped]" that CI reads, and, for each failure, the
// control-plane log files a test attached (see @tessera/testenv).
"use strict";
const Mocha = require("mocha");
const { EVENT_RUN_END, EVENT_TEST_FAIL } = Mocha.Runner.constants;

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const logs = [];
    runner.on(EVENT_TEST_FAIL, (test, err) => {
      if (err && Array.isArray(err.controlPlaneLogs)) logs.push(...err.controlPlaneLogs);
    });
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats;
      const dirs = process.env.TESSERA_KEPT_LOGS;
      if (logs.length) console.log(`control-plane logs of failed tests:\n  ${logs.join("\n  ")}`);
      if (dirs) console.log(`control-plane logs kept: ${dirs}`);
      const skipped = s.pending ? `, ${s.pending} skipped` : "";
      console.log(`${s.passes} passed, ${s.failures} failed${skipped}`);
    });
  }
}
module.exports = SummaryReporter;
