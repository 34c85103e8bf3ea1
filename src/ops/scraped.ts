// Metrics whose values live elsewhere (upstream states, queue depths, running totals) are read when
// Prometheus scrapes: each one is reset first, so a server a reload removed disappears from the output.
// A counter filled this way (inc by the running total) keeps counter semantics in the exposition
// (`# TYPE … counter`), so rate() works; a replaced upstream starting from 0 reads as a counter reset.
import { Counter, Gauge, type Registry } from 'prom-client';

type RecordValue = (labels: Readonly<Partial<Record<string, string>>>, value: number) => void;

export interface ScrapedMetric {
  name: string;
  help: string;
  labelNames?: readonly string[];
  /** Called once per scrape; records each labelled value. */
  fill(record: RecordValue): void;
}

export function gaugeAtScrape(registry: Registry, metric: ScrapedMetric): void {
  const { fill, labelNames = [], ...named } = metric;
  new Gauge({
    ...named,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      fill((labels, value) => this.set(labels, value));
    },
  });
}

export function counterAtScrape(registry: Registry, metric: ScrapedMetric): void {
  const { fill, labelNames = [], ...named } = metric;
  new Counter({
    ...named,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      fill((labels, value) => this.inc(labels, runningTotal(value)));
    },
  });
}

/** A running total from a callback, made safe for Counter.inc (which throws on negative or non-finite). */
export function runningTotal(n: number): number {
  return Number.isFinite(n) && n > 0 ? n : 0;
}
