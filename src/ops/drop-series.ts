// Drops every series of a metric whose `label` has `value` (a server a reload removed), so /metrics stops
// showing numbers for something that is gone. prom-client removes one full label set at a time; the sets
// are read back from the metric itself, so nothing needs to remember which were made.
import type { Counter, Histogram } from 'prom-client';

export async function dropSeries(
  metric: Counter<string> | Histogram<string>,
  label: string,
  value: string,
): Promise<void> {
  const seen = new Set<string>();
  for (const { labels } of (await metric.get()).values) {
    if (labels[label] !== value) continue;
    // A histogram lists each bucket (le) and its _sum and _count: one series under the metric's own labels.
    const { le: _bucket, ...own } = labels;
    const key = JSON.stringify(own);
    if (seen.has(key)) continue;
    seen.add(key);
    metric.remove(own as Record<string, string>);
  }
}
