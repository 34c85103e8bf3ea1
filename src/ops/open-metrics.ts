// The same metrics in the OpenMetrics text format, for scrapers that ask for it (Accept:
// application/openmetrics-text): only that format carries exemplars. prom-client renders a registry in one
// format, and its OpenMetrics rendering renames each counter object in place (drops `_total`), which would
// break the classic text rendered from the same objects. So each scrape renders views: objects whose
// prototype is the metric, so they read its values, while the renaming (and a scrape-time metric's reset and
// refill) lands on the view.
import { Registry } from 'prom-client';

export const OPENMETRICS_CONTENT_TYPE = Registry.OPENMETRICS_CONTENT_TYPE;

/** Whether an Accept header asks for OpenMetrics (Prometheus sends it first when it can take exemplars). */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  return accept?.includes('application/openmetrics-text') === true;
}

export function renderOpenMetrics(source: Registry): Promise<string> {
  const view = new Registry<typeof OPENMETRICS_CONTENT_TYPE>();
  view.setContentType(OPENMETRICS_CONTENT_TYPE);
  for (const metric of source.getMetricsAsArray()) view.registerMetric(Object.create(metric));
  return view.metrics();
}
