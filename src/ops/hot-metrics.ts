// Counters and histograms for what every request records. prom-client builds a string from the label object
// on every inc/observe (its `labels()` children too), which was a few hundred bytes and a microsecond or so
// per metric per call on the request path. Here a child is bound once per label set and updating it is plain
// arithmetic; the exposition is prom-client's own (the registry renders what `get` returns, in the shape its
// Counter and Histogram return), so both text formats and OpenMetrics exemplars look as before.
import type { Registry } from 'prom-client';

type Labels = Record<string, string>;

interface Exemplar {
  labelSet: Labels;
  value: number;
  timestamp: number;
}

interface Value {
  labels: Labels;
  value: number;
  metricName?: string;
  exemplar?: Exemplar | null;
}

interface Exposed {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: Value[];
  aggregator: 'sum';
}

interface HotMetricConfig {
  name: string;
  help: string;
  labelNames: readonly string[];
}

/** What prom-client's registry reads of a metric: registry.js uses name, type and get() alone. */
interface RegistryMetric {
  name: string;
  type: string;
  get(): Promise<Exposed>;
}

/**
 * prom-client types `registerMetric` with its own four classes; the registry itself takes any metric shaped like them.
 */
function register(registry: Registry, metric: RegistryMetric): void {
  Reflect.apply(registry.registerMetric, registry, [metric]);
}

abstract class HotMetric<Series extends { labels: Labels }> {
  abstract get type(): 'counter' | 'histogram';
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum' as const;
  protected readonly labelNames: readonly string[];
  protected series = new Map<string, Series>();

  constructor(registry: Registry, config: HotMetricConfig) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames;
    register(registry, this);
  }

  protected labelsOf(values: readonly string[]): Labels {
    if (values.length !== this.labelNames.length)
      throw new Error(`${this.name} takes ${this.labelNames.length} label values, got ${values.length}`);
    const labels: Labels = {};
    this.labelNames.forEach((name, i) => {
      labels[name] = values[i]!;
    });
    return labels;
  }

  /** Forgets every series whose labels include these (a server removed by a reload). */
  remove(match: Labels): void {
    for (const [key, { labels }] of this.series) {
      if (Object.entries(match).every(([name, value]) => labels[name] === value)) this.series.delete(key);
    }
  }

  reset(): void {
    this.series = new Map();
  }

  abstract get(): Promise<Exposed>;
}

interface CounterSeries {
  labels: Labels;
  value: number;
}

export interface CounterChild {
  inc(by?: number): void;
}

export class HotCounter extends HotMetric<CounterSeries> {
  get type() {
    return 'counter' as const;
  }

  /** The child for one label set (found once; keep it): inc is an addition. */
  labels(...values: string[]): CounterChild {
    const key = values.join('\u0000');
    let series = this.series.get(key);
    if (!series) {
      series = { labels: this.labelsOf(values), value: 0 };
      this.series.set(key, series);
    }
    const bound = series;
    return {
      inc(by = 1) {
        if (by > 0 && Number.isFinite(by)) bound.value += by;
      },
    };
  }

  async get(): Promise<Exposed> {
    const values = [...this.series.values()].map((s) => ({ labels: { ...s.labels }, value: s.value }));
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

interface HistogramSeries {
  labels: Labels;
  /** Per bucket (the last is +Inf), not cumulative. */
  counts: Float64Array;
  exemplars: (Exemplar | undefined)[] | undefined;
  sum: number;
  count: number;
}

export interface HistogramChild {
  observe(value: number): void;
  /** With the trace id (or any label set under 128 characters) as the exemplar of the value's bucket. */
  observeWithExemplar(value: number, exemplar: Labels): void;
}

export class HotHistogram extends HotMetric<HistogramSeries> {
  get type() {
    return 'histogram' as const;
  }
  private readonly bounds: readonly number[];

  constructor(registry: Registry, config: HotMetricConfig & { buckets: readonly number[] }) {
    super(registry, config);
    this.bounds = [...config.buckets].sort((a, b) => a - b);
  }

  labels(...values: string[]): HistogramChild {
    const key = values.join('\u0000');
    let series = this.series.get(key);
    if (!series) {
      series = {
        labels: this.labelsOf(values),
        counts: new Float64Array(this.bounds.length + 1),
        exemplars: undefined,
        sum: 0,
        count: 0,
      };
      this.series.set(key, series);
    }
    const bound = series;
    const bucketOf = (value: number) => this.bucketOf(value);
    return {
      observe(value) {
        if (!Number.isFinite(value)) return;
        bound.counts[bucketOf(value)]! += 1;
        bound.sum += value;
        bound.count += 1;
      },
      observeWithExemplar(value, labelSet) {
        if (!Number.isFinite(value)) return;
        const bucket = bucketOf(value);
        bound.counts[bucket]! += 1;
        bound.sum += value;
        bound.count += 1;
        bound.exemplars ??= [];
        bound.exemplars[bucket] = { labelSet, value, timestamp: Date.now() / 1000 };
      },
    };
  }

  private bucketOf(value: number): number {
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) if (value <= bounds[i]!) return i;
    return bounds.length;
  }

  async get(): Promise<Exposed> {
    const values: Value[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        cumulative += s.counts[i]!;
        const le = i < this.bounds.length ? String(this.bounds[i]) : '+Inf';
        values.push({
          labels: { le, ...s.labels },
          value: cumulative,
          metricName: bucketName,
          exemplar: s.exemplars?.[i] ?? null,
        });
      }
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}
