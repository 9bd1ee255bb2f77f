import { strict as assert } from "node:assert";
import { FakeClock } from "@tessera/core/testing";
import { ResyncScheduler, type ResyncTick } from "../src/index.js";
import { seededRandom } from "./seeded-random.js";

function keys(n: number, prefix = "ns/obj-"): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i}`);
}

/** Moves the clock in steps of `stepMs` up to `totalMs`, firing timers as they fall due. */
function advanceBy(clock: FakeClock, totalMs: number, stepMs = 100): void {
  for (let t = 0; t < totalMs; t += stepMs) clock.advanceSync(stepMs);
}

describe("ResyncScheduler", () => {
  it("re-delivers 100,000 keys within one period on a single timer, each tick doing work only for the keys due", () => {
    const clock = new FakeClock({ startMs: 5_000 });
    const ticks: ResyncTick[] = [];
    const scheduler = new ResyncScheduler({ clock, random: seededRandom(1), onTick: (t) => ticks.push(t) });
    const periodMs = 60_000;
    const deliveredAt = new Map<string, number[]>();
    const schedule = scheduler.schedule(periodMs, (due) => {
      for (const key of due) {
        const times = deliveredAt.get(key);
        if (times) times.push(clock.now());
        else deliveredAt.set(key, [clock.now()]);
      }
    });
    const all = keys(100_000);
    for (const key of all) schedule.track(key);
    assert.equal(clock.pendingTimers, 1, "one timer for 100,000 keys");

    let maxTimers = 0;
    for (let t = 0; t < periodMs + 2_500; t += 250) {
      clock.advanceSync(250);
      maxTimers = Math.max(maxTimers, clock.pendingTimers);
    }
    assert.equal(maxTimers, 1, "never more than one timer");

    // Every key came back within one period (plus a bucket and a tick of slack), exactly once so far.
    assert.equal(deliveredAt.size, all.length);
    for (const [key, times] of deliveredAt) {
      assert.ok(times.length >= 1 && times.length <= 2, `${key} delivered ${times.length} times`);
      assert.ok((times[0] as number) - 5_000 <= periodMs + 2_250, `${key} first delivered late`);
    }
    const inFirstPeriod = Array.from(deliveredAt.values()).filter(
      (t) => (t[0] as number) - 5_000 <= periodMs,
    );
    assert.ok(
      inFirstPeriod.length >= all.length * 0.97,
      `only ${inFirstPeriod.length} keys inside the period`,
    );

    // Work per tick is the keys due in it: about 100,000 / 60 per second, never the whole collection.
    for (const tick of ticks) {
      assert.equal(tick.examined, tick.delivered, "no stale entries, so nothing examined is skipped");
      assert.ok(tick.examined < 4_000, `a tick examined ${tick.examined} entries`);
    }
    const examined = ticks.reduce((n, t) => n + t.examined, 0);
    const delivered = Array.from(deliveredAt.values()).reduce((n, t) => n + t.length, 0);
    assert.equal(examined, delivered);
    assert.equal(scheduler.pendingEntries, all.length, "every key is filed again for the next period");
  });

  it("does work proportional to the keys due, not to the keys tracked", () => {
    const clock = new FakeClock();
    const work = (tracked: number): number => {
      let examined = 0;
      const scheduler = new ResyncScheduler({
        clock,
        random: seededRandom(7),
        onTick: (t) => (examined += t.examined),
      });
      // Many keys on a long period, ten keys on a short one: in 20 s the long ones are barely due.
      const slow = scheduler.schedule(3_600_000, () => {});
      for (const key of keys(tracked, "slow/")) slow.track(key);
      const fast = scheduler.schedule(5_000, () => {});
      for (const key of keys(10, "fast/")) fast.track(key);
      advanceBy(clock, 20_000, 500);
      slow.close();
      fast.close();
      return examined;
    };
    const small = work(1_000);
    const large = work(100_000);
    // 10 fast keys x 4-5 periods, plus the slow keys whose first deadline fell in 20 s of 3,600 s.
    assert.ok(small < 100, `1,000 tracked: ${small} examined`);
    assert.ok(large < 1_000, `100,000 tracked: ${large} examined`);
    assert.ok(large < 100_000 / 50, "the tick never walks the whole collection");
  });

  it("arms its ticker with a delay jittered in [187.5, 312.5] ms and disarms when nothing is tracked", () => {
    const clock = new FakeClock();
    const scheduler = new ResyncScheduler({ clock, random: seededRandom(3) });
    assert.equal(clock.pendingTimers, 0);
    const schedule = scheduler.schedule(10_000, () => {});
    schedule.track("a");
    const delays: number[] = [];
    for (let i = 0; i < 50; i++) {
      const [delay] = clock.pendingDelays();
      delays.push(delay as number);
      clock.advanceSync(delay as number);
    }
    assert.ok(
      delays.every((d) => d >= 187.5 && d <= 312.5),
      `delays ${delays.join(",")}`,
    );
    assert.ok(new Set(delays).size > 10, "each delay is drawn anew");
    schedule.close();
    assert.equal(scheduler.pendingEntries, 0);
    assert.equal(clock.pendingTimers, 0, "no timer while nothing is tracked");
    assert.equal(scheduler.tickerArmed, false);
  });

  it("stops delivering an untracked key, and a key tracked again is delivered once per period", () => {
    const clock = new FakeClock();
    const seen: string[] = [];
    const scheduler = new ResyncScheduler({ clock, random: () => 0.5 });
    const schedule = scheduler.schedule(4_000, (due) => seen.push(...due));
    schedule.track("gone");
    schedule.track("back");
    schedule.track("stays");
    schedule.untrack("gone");
    schedule.untrack("back");
    schedule.track("back");
    schedule.track("back");
    advanceBy(clock, 12_500);
    assert.equal(seen.filter((k) => k === "gone").length, 0);
    const back = seen.filter((k) => k === "back").length;
    const stays = seen.filter((k) => k === "stays").length;
    assert.equal(back, stays, `back ${back} times, stays ${stays} times`);
    assert.ok(stays >= 3 && stays <= 4);
  });

  it("pops every bucket that passed when the process slept through many, delivering each key once", () => {
    // A clock whose timer fires only when the test says so, however late.
    let now = 0;
    let pending: (() => void) | undefined;
    const clock = {
      now: () => now,
      wallTime: () => new Date(now),
      setTimer: (_ms: number, callback: () => void) => {
        pending = callback;
        return { cancel: () => (pending = undefined) };
      },
    };
    const ticks: ResyncTick[] = [];
    const seen: string[] = [];
    const scheduler = new ResyncScheduler({ clock, random: () => 0, onTick: (t) => ticks.push(t) });
    const schedule = scheduler.schedule(2_000, (due) => seen.push(...due));
    for (const key of keys(5)) schedule.track(key);
    now = 60_000;
    pending?.();
    assert.equal(seen.length, 5, "each key once, not once per missed period");
    assert.equal(ticks[0]?.examined, 5);
    assert.equal(scheduler.pendingEntries, 5);
    now = 61_000;
    pending?.();
    assert.equal(seen.length, 5, "the next delivery is one period after the late one");
    now = 62_000;
    pending?.();
    assert.equal(seen.length, 10);
  });

  it("spreads keys tracked together evenly: every second of the period gets its share, give or take one", () => {
    const clock = new FakeClock();
    const perSecond = new Map<number, number>();
    const scheduler = new ResyncScheduler({ clock, random: seededRandom(11) });
    const periodMs = 60_000;
    const schedule = scheduler.schedule(periodMs, (due) => {
      const second = Math.floor(clock.now() / 1000);
      perSecond.set(second, (perSecond.get(second) ?? 0) + due.length);
    });
    for (const key of keys(1_000)) schedule.track(key);
    advanceBy(clock, 3 * periodMs, 50);
    // Seconds 1 to 179 (the first and last are cut by the start and the end): 1,000 / 60 each.
    const counts = Array.from({ length: 178 }, (_, i) => perSecond.get(i + 1) ?? 0);
    const mean = 1_000 / 60;
    const max = Math.max(...counts);
    const min = Math.min(...counts);
    // Ticks every 187-313 ms pop whole quarter-second buckets, so a second
    // holds three to five buckets' worth: within a quarter of the mean, plus rounding.
    assert.ok(max <= mean * 1.25 + 2, `max ${max}/s against a mean of ${mean.toFixed(1)}/s`);
    assert.ok(min >= mean * 0.75 - 2, `min ${min}/s against a mean of ${mean.toFixed(1)}/s`);
  });

  it("rejects a period that is not positive, and a bucket narrower than 1 ms", () => {
    assert.throws(() => new ResyncScheduler({ clock: new FakeClock(), bucketMs: 0 }), /at least 1 ms, got 0/);
    const scheduler = new ResyncScheduler({ clock: new FakeClock() });
    assert.throws(() => scheduler.schedule(0, () => {}), RangeError);
    assert.throws(() => scheduler.schedule(Number.NaN, () => {}), RangeError);
  });
});
