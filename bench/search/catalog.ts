// The search bench's catalog: the real fixtures (bench/search/fixtures, one server per file, public names
// `<server>__<tool>`) and, to reach a large catalog, synthetic distractor servers generated from a fixed seed.
// The distractors are plausible tools of other services that share the real ones' vocabulary (files,
// messages, issues, users, channels, branches…), so they compete for the same queries instead of padding
// the index with words nobody searches for.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { JsonObject } from '../../protocol/jsonrpc.js';
import { seededRandom } from '../../test/seeded-random.js';

const HERE = fileURLToPath(new URL('.//', import.meta.url));
export const SEPARATOR = '__';

export interface Server {
  name: string;
  /** Tools with their public names, as /mcp lists them. */
  tools: JsonObject[];
}

export interface LabelledQuery {
  query: string;
  expected: string[];
}

const publicTools = (server: string, tools: JsonObject[]): JsonObject[] =>
  tools.map((tool) => ({ ...tool, name: `${server}${SEPARATOR}${String(tool.name)}` }));

export function realServers(): Server[] {
  return readdirSync(`${HERE}fixtures`)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const name = file.slice(0, -'.json'.length);
      return { name, tools: publicTools(name, JSON.parse(readFileSync(`${HERE}fixtures/${file}`, 'utf8'))) };
    });
}

/** The labelled queries the index was tuned on. */
export function labelledQueries(): LabelledQuery[] {
  return JSON.parse(readFileSync(`${HERE}queries.json`, 'utf8'));
}

/** Queries written after the tuning, never tuned on: they show whether the tuning generalizes. */
export function heldOutQueries(): LabelledQuery[] {
  return JSON.parse(readFileSync(`${HERE}queries-holdout.json`, 'utf8'));
}

// service: what it is called, and the things it holds.
const SERVICES: Record<string, string[]> = {
  jira: ['issue', 'sprint', 'board', 'epic', 'comment', 'project', 'worklog', 'attachment'],
  confluence: ['page', 'space', 'comment', 'attachment', 'label', 'template', 'blog post'],
  gitlab: ['merge request', 'pipeline', 'branch', 'issue', 'project', 'commit', 'tag', 'runner'],
  bitbucket: ['pull request', 'repository', 'branch', 'commit', 'pipeline', 'webhook'],
  azure_devops: ['work item', 'pipeline', 'repository', 'build', 'release', 'wiki page'],
  discord: ['message', 'channel', 'server', 'role', 'member', 'thread', 'reaction'],
  teams: ['message', 'channel', 'meeting', 'chat', 'team', 'member'],
  telegram: ['message', 'chat', 'bot command', 'sticker', 'contact'],
  gmail: ['email', 'draft', 'label', 'thread', 'attachment', 'filter'],
  outlook: ['email', 'calendar event', 'contact', 'folder', 'meeting invite'],
  google_calendar: ['event', 'calendar', 'reminder', 'attendee', 'free busy slot'],
  dropbox: ['file', 'folder', 'shared link', 'revision', 'file request'],
  box: ['file', 'folder', 'collaboration', 'comment', 'task', 'metadata template'],
  onedrive: ['file', 'folder', 'sharing link', 'drive item', 'thumbnail'],
  s3: ['object', 'bucket', 'presigned url', 'lifecycle rule', 'bucket policy'],
  gcs: ['object', 'bucket', 'signed url', 'notification', 'acl'],
  kubernetes: ['pod', 'deployment', 'service', 'namespace', 'config map', 'secret', 'node', 'job'],
  docker: ['container', 'image', 'volume', 'network', 'compose project'],
  terraform: ['workspace', 'plan', 'state', 'variable', 'run', 'module'],
  aws_ec2: ['instance', 'security group', 'key pair', 'volume', 'snapshot', 'elastic ip'],
  datadog: ['monitor', 'dashboard', 'metric', 'log', 'incident', 'slo', 'event'],
  pagerduty: ['incident', 'service', 'schedule', 'escalation policy', 'on call shift'],
  sentry: ['issue', 'event', 'release', 'project', 'alert rule', 'stack trace'],
  grafana: ['dashboard', 'panel', 'alert', 'data source', 'folder'],
  stripe: ['customer', 'payment', 'invoice', 'subscription', 'refund', 'product', 'price'],
  shopify: ['order', 'product', 'customer', 'inventory item', 'collection', 'discount code'],
  salesforce: ['lead', 'opportunity', 'account', 'contact', 'case', 'report'],
  hubspot: ['contact', 'deal', 'company', 'ticket', 'email campaign', 'note'],
  zendesk: ['ticket', 'user', 'organization', 'macro', 'article', 'comment'],
  intercom: ['conversation', 'contact', 'article', 'tag', 'note'],
  notion: ['page', 'database', 'block', 'comment', 'user', 'database row'],
  airtable: ['record', 'table', 'base', 'view', 'field'],
  trello: ['card', 'board', 'list', 'checklist', 'label', 'member'],
  asana: ['task', 'project', 'section', 'subtask', 'story', 'tag'],
  clickup: ['task', 'list', 'space', 'goal', 'time entry', 'comment'],
  monday: ['item', 'board', 'group', 'column value', 'update'],
  todoist: ['task', 'project', 'label', 'filter', 'reminder'],
  zoom: ['meeting', 'recording', 'webinar', 'participant', 'transcript'],
  youtube: ['video', 'playlist', 'comment', 'channel', 'caption', 'subscription'],
  spotify: ['track', 'playlist', 'album', 'artist', 'queue item', 'device'],
  twitter: ['tweet', 'user', 'list', 'bookmark', 'direct message', 'follower'],
  reddit: ['post', 'comment', 'subreddit', 'user', 'saved item'],
  hackernews: ['story', 'comment', 'user', 'job posting'],
  weather: ['forecast', 'current conditions', 'alert', 'historical observation', 'air quality index'],
  finance: ['stock quote', 'exchange rate', 'price history', 'company filing', 'watchlist'],
  crypto: ['token price', 'wallet balance', 'transaction', 'block', 'gas fee'],
  translate: ['text translation', 'language detection', 'glossary', 'document translation'],
  pdf: ['pdf document', 'page', 'form field', 'annotation', 'table extraction'],
  excel: ['workbook', 'worksheet', 'cell range', 'chart', 'pivot table', 'formula'],
  google_sheets: ['spreadsheet', 'sheet', 'cell range', 'named range', 'row'],
  mysql: ['table', 'row', 'index', 'stored procedure', 'view', 'schema'],
  mongodb: ['document', 'collection', 'index', 'aggregation pipeline', 'database'],
  elasticsearch: ['document', 'index', 'mapping', 'alias', 'snapshot'],
  snowflake: ['warehouse', 'table', 'query history', 'stage', 'schema'],
  bigquery: ['dataset', 'table', 'query job', 'view', 'routine'],
  figma: ['file', 'frame', 'component', 'comment', 'style', 'version'],
  canva: ['design', 'template', 'asset', 'folder', 'brand kit'],
  wordpress: ['post', 'page', 'media item', 'comment', 'category', 'plugin'],
  contentful: ['entry', 'asset', 'content type', 'environment', 'locale'],
  twilio: ['sms message', 'phone number', 'call', 'recording', 'conversation'],
  sendgrid: ['email', 'template', 'contact list', 'suppression', 'sender identity'],
  mailchimp: ['campaign', 'audience', 'subscriber', 'template', 'segment'],
  okta: ['user', 'group', 'application', 'factor', 'session'],
  vault: ['secret', 'policy', 'token', 'lease', 'auth method'],
  cloudflare: ['dns record', 'zone', 'worker', 'firewall rule', 'cache purge'],
  vercel: ['deployment', 'project', 'domain', 'environment variable', 'log'],
  netlify: ['site', 'deploy', 'form submission', 'build hook', 'function'],
  npm_registry: ['package', 'version', 'download count', 'maintainer', 'dist tag'],
  pypi: ['package', 'release', 'project metadata', 'dependency'],
  arxiv: ['paper', 'author', 'category', 'citation'],
  wikipedia: ['article', 'summary', 'revision', 'category', 'image'],
  uber: ['ride', 'price estimate', 'driver', 'receipt'],
  airbnb: ['listing', 'reservation', 'review', 'host', 'availability'],
  calendly: ['event type', 'scheduled event', 'invitee', 'availability'],
  docusign: ['envelope', 'template', 'recipient', 'document', 'signature'],
  quickbooks: ['invoice', 'bill', 'customer', 'vendor', 'payment', 'expense'],
  xero: ['invoice', 'contact', 'bank transaction', 'account', 'payroll run'],
  greenhouse: ['candidate', 'job', 'application', 'interview', 'offer'],
  workday: ['employee', 'time off request', 'position', 'expense report'],
  obsidian: ['note', 'vault', 'tag', 'backlink', 'daily note'],
  evernote: ['note', 'notebook', 'tag', 'reminder'],
  home_assistant: ['light', 'switch', 'thermostat', 'automation', 'scene', 'sensor'],
  openai: ['completion', 'embedding', 'image', 'fine tune job', 'file'],
  huggingface: ['model', 'dataset', 'space', 'inference endpoint'],
  jenkins: ['job', 'build', 'node', 'plugin', 'console log'],
  circleci: ['pipeline', 'workflow', 'job', 'artifact', 'context'],
  postman: ['collection', 'request', 'environment', 'monitor', 'mock server'],
  sonarqube: ['project', 'issue', 'quality gate', 'hotspot', 'rule'],
  snyk: ['vulnerability', 'project', 'dependency', 'license issue', 'fix pr'],
};

const VERBS: [string, string][] = [
  ['list', 'List {plural} in {service}, newest first, with paging.'],
  ['get', 'Fetch one {entity} from {service} by its identifier, with all of its attributes.'],
  ['create', 'Create a new {entity} in {service} from the given fields.'],
  ['update', 'Change fields of an existing {entity} in {service}; fields not given are left as they are.'],
  ['delete', 'Permanently delete a {entity} from {service}. This cannot be undone.'],
  ['search', 'Search {plural} in {service} by keyword, with optional filters.'],
  ['archive', 'Archive a {entity} in {service} so it no longer shows in default views.'],
  ['export', 'Export {plural} from {service} as CSV or JSON.'],
  ['import', 'Import {plural} into {service} from an uploaded file.'],
  ['share', 'Share a {entity} in {service} with another person or team.'],
  ['assign', 'Assign a {entity} in {service} to a user.'],
  ['restore', 'Restore a previously archived or deleted {entity} in {service}.'],
  ['copy', 'Duplicate a {entity} in {service}, including its settings.'],
  ['move', 'Move a {entity} to a different parent or location in {service}.'],
  ['count', 'Count {plural} in {service} matching a filter.'],
  ['watch', 'Subscribe to changes of a {entity} in {service}.'],
  ['sync', 'Synchronise {plural} between {service} and a local cache.'],
  ['validate', 'Check a {entity} definition against {service} rules without saving it.'],
];

const PARAMS: [string, string][] = [
  ['limit', 'Maximum number of results'],
  ['cursor', 'Opaque cursor from the previous page'],
  ['fields', 'Which attributes to return'],
  ['dry_run', 'Report what would change without changing it'],
  ['workspace', 'Workspace or tenant to act in'],
  ['notify', 'Whether to notify watchers'],
  ['format', 'Output format'],
  ['sort', 'Sort order of the results'],
];

const plural = (entity: string) =>
  entity.endsWith('s')
    ? entity
    : entity.endsWith('y') && !/[aeiou]y$/.test(entity)
      ? `${entity.slice(0, -1)}ies`
      : `${entity}s`;
const snake = (words: string) => words.replace(/\s+/g, '_');
const displayName = (service: string) => service.replace(/_/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase());

function syntheticTool(service: string, verb: [string, string], entity: string, random: () => number): JsonObject {
  const many =
    verb[0] === 'list' ||
    verb[0] === 'search' ||
    verb[0] === 'export' ||
    verb[0] === 'import' ||
    verb[0] === 'count' ||
    verb[0] === 'sync';
  const name = `${verb[0]}_${snake(many ? plural(entity) : entity)}`;
  const properties: JsonObject = {};
  if (!many) properties[`${snake(entity)}_id`] = { type: 'string', description: `Identifier of the ${entity}` };
  if (verb[0] === 'search') properties.query = { type: 'string', description: 'Keywords to match' };
  for (const [param, description] of PARAMS) if (random() < 0.25) properties[param] = { type: 'string', description };
  const description = verb[1]
    .replaceAll('{entity}', entity)
    .replaceAll('{plural}', plural(entity))
    .replaceAll('{service}', displayName(service));
  const title = `${verb[0].charAt(0).toUpperCase()}${verb[0].slice(1)} ${many ? plural(entity) : entity}`;
  return { name, title, description, inputSchema: { type: 'object', properties } };
}

/** Synthetic servers whose tools, with the real ones, make `total` tools. Deterministic for a given seed. */
export function distractorServers(count: number, seed = 18): Server[] {
  const random = seededRandom(seed);
  const servers: Server[] = [];
  const services = Object.entries(SERVICES);
  let made = 0;
  for (let round = 0; made < count; round++) {
    for (const [service, entities] of services) {
      if (made >= count) break;
      const name = round === 0 ? service : `${service}_${round + 1}`;
      const tools: JsonObject[] = [];
      for (const entity of entities)
        for (const verb of VERBS)
          if (made + tools.length < count && random() < 0.6) tools.push(syntheticTool(service, verb, entity, random));
      made += tools.length;
      servers.push({ name, tools: publicTools(name, tools) });
    }
  }
  return servers;
}

/** The real servers and enough distractors for `total` tools. */
export function catalog(total: number): Server[] {
  const real = realServers();
  const realCount = real.reduce((sum, server) => sum + server.tools.length, 0);
  return [...real, ...distractorServers(Math.max(0, total - realCount))];
}
