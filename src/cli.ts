#!/usr/bin/env node
// mcp-gateway [--config FILE] [--host H] [--port P] [--log-level L]
// mcp-gateway --stdio "<command line>" [--name N] [--host H] [--port P] [--log-level L]
import { existsSync, watch } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse as parseShellWords } from 'shell-quote';
import {
  ConfigError,
  ConfigFileMissing,
  exposureProblem,
  loadConfigFile,
  LOG_LEVELS,
  parseConfig,
  SERVER_NAME,
  type GatewayConfig,
} from './config/index.js';
import { startGateway, type RunningGateway } from './gateway.js';
import type { Logger } from 'pino';
import { createLogger, LOG_FORMATS, logDestination, type LogFormat } from '../infra/logger.js';
import { GATEWAY_INFO } from '../infra/version.js';

const HELP = `mcp-gateway — serve MCP servers as MCP 2026-07-28 Streamable HTTP endpoints

Usage:
  mcp-gateway [--config FILE] [--host HOST] [--port PORT] [--log-level LEVEL]
      Runs every server named in the config file (default: gateway.config.yaml) and serves each at
      POST http://HOST:PORT/servers/<name>/mcp

  mcp-gateway --stdio "<command line>" [--name NAME] [--host HOST] [--port PORT] [--log-level LEVEL]
      Bridges one stdio server with no config file, for example:
        mcp-gateway --stdio "node ./my-server.js --verbose" --name mine
      serves it at POST http://HOST:PORT/servers/mine/mcp (NAME defaults to "stdio").
      One child process is shared by every client; its era (modern or 2025 legacy) is detected.

Options:
  --config FILE      YAML config (every key: docs/configuration.md); \${VAR} is taken from the environment
  --host HOST        listen address (default 127.0.0.1; anything else needs an auth: section)
  --port PORT        listen port (default 8080; 0 picks a free one)
  --stdio CMDLINE    bridge this command instead of reading a config file
  --name NAME        the server's name with --stdio (1-32 of A-Z a-z 0-9 _ -)
  --log-level LEVEL  fatal, error, warn, info (default), debug, trace or silent
  --log-format FMT   json (default) or pretty (readable lines for a terminal)
  -v, --version      print the version and exit
  -h, --help         this text

Endpoints (on http://HOST:PORT):
  POST /mcp                     every server behind one endpoint (names <prefix>__<name>)
  POST /servers/<name>/mcp      one server
  POST /profiles/<name>/mcp     a profile: a curated view over /mcp (profiles: in the config)
  POST /search/mcp              search mode: search_tools and call_tool over every tool
  GET  /healthz, /readyz        liveness; readiness (503 until required servers are ready, and while draining)
  GET  /metrics, /, /status.json, /config
                                Prometheus metrics, the status page and its data, the running config
                                (operators only with auth: see auth.operators)

Logs are JSON lines on stderr (with trace_id and span_id when tracing: see telemetry: in docs/configuration.md).`;

function usageError(message: string): never {
  process.stderr.write(`mcp-gateway: ${message}\nRun mcp-gateway --help for usage.\n`);
  process.exit(2);
}

type Options = ReturnType<typeof readOptions>;

async function main(): Promise<void> {
  const options = readOptions();
  if (options.help) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  if (options.version) {
    process.stdout.write(`${GATEWAY_INFO.version}\n`);
    return;
  }
  // Options are checked before any file is read, so a bad one is named whatever the config says.
  if (options.config !== undefined && options.stdio !== undefined)
    usageError('use either --config or --stdio, not both');
  const port = portOption(options.port);
  const logLevel = logLevelOption(options['log-level']);
  const destination = await logDestinationOption(options['log-format']);
  const config = await startupConfig(options, port);
  const log = createLogger(logLevel ?? config.log.level, destination);

  let gateway: RunningGateway;
  try {
    gateway = await startGateway(config, log);
  } catch (error) {
    // Exit now, not when the event loop empties: parts opened before the failure (Redis clients, timers)
    // would keep a process that serves nothing alive, and its supervisor would never restart it.
    log.fatal({ err: (error as Error).message }, 'could not start');
    log.flush(() => process.exit(1));
    return;
  }
  stopOnSignals(gateway, log);
  reloadOnSignalOrEdit(gateway, options, log);
}

function readOptions() {
  try {
    return parseArgs({
      options: {
        config: { type: 'string' },
        host: { type: 'string' },
        port: { type: 'string' },
        stdio: { type: 'string' },
        name: { type: 'string' },
        'log-level': { type: 'string' },
        'log-format': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
      strict: true,
    }).values;
  } catch (error) {
    usageError((error as Error).message);
  }
}

function portOption(value: string | undefined): number | undefined {
  const port = value === undefined ? undefined : Number(value);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
    usageError(`--port must be a number from 0 to 65535 (got ${value})`);
  return port;
}

function logLevelOption(wanted: string | undefined): (typeof LOG_LEVELS)[number] | undefined {
  const logLevel = LOG_LEVELS.find((level) => level === wanted);
  if (wanted !== undefined && !logLevel)
    usageError(`--log-level must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(wanted)})`);
  return logLevel;
}

async function logDestinationOption(wanted: string | undefined) {
  const format = LOG_FORMATS.find((f) => f === (wanted ?? 'json'));
  if (!format) usageError(`--log-format must be one of ${LOG_FORMATS.join(', ')} (got ${JSON.stringify(wanted)})`);
  try {
    return await logDestination(format satisfies LogFormat);
  } catch (error) {
    process.stderr.write(`mcp-gateway: ${(error as Error).message}\n`);
    process.exit(1);
  }
}

/** The config to start with: --stdio's, or the file's, with --host and --port over what it says. */
async function startupConfig(options: Options, port: number | undefined): Promise<GatewayConfig> {
  let config: GatewayConfig;
  try {
    config =
      options.stdio !== undefined
        ? stdioConfig(options.stdio, options.name ?? 'stdio')
        : await loadConfigFile(options.config ?? 'gateway.config.yaml');
  } catch (error) {
    if (error instanceof ConfigFileMissing) usageError(withoutConfigFile(error, options.config === undefined));
    if (error instanceof ConfigError) usageError(error.message);
    throw error;
  }
  if (options.host !== undefined) {
    config.listen.host = options.host;
    const exposed = exposureProblem(config);
    if (exposed) usageError(`--host ${options.host}: ${exposed}`);
  }
  if (port !== undefined) config.listen.port = port;
  return config;
}

/** The first SIGINT or SIGTERM drains and exits; a second one exits at once. */
function stopOnSignals(gateway: RunningGateway, log: Logger): void {
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting without waiting for in-flight requests');
      log.flush();
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    void gateway.close().then(() => {
      log.info({}, 'stopped');
      log.flush();
      process.exit(0);
    });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/**
 * SIGHUP, or a change to the config file, reloads it: servers added, changed or removed, and
 * authentication, policies, rate limits and audit for the next request; a config that does not load
 * leaves the running one in place.
 */
function reloadOnSignalOrEdit(gateway: RunningGateway, options: Options, log: Logger): void {
  const configFile = options.stdio === undefined ? (options.config ?? 'gateway.config.yaml') : undefined;
  // One reload at a time, in the order asked for.
  let reloading = Promise.resolve();
  const reloadNow = (): void => {
    if (!configFile) {
      log.warn({}, 'SIGHUP: nothing to reload (the gateway runs --stdio, not a config file)');
      return;
    }
    reloading = reloading.then(() => reload(gateway, configFile, options, log));
  };
  process.on('SIGHUP', reloadNow);
  if (configFile) watchFile(configFile, reloadNow, log);
}

/** Calls `changed` once an edit to `file` settles; watches the folder, as editors replace files by renaming. */
function watchFile(file: string, changed: () => void, log: Logger): void {
  const folder = path.dirname(path.resolve(file));
  const name = path.basename(file);
  let timer: NodeJS.Timeout | undefined;
  try {
    const watcher = watch(folder, (_event, filename) => {
      // `..data` is how a Kubernetes ConfigMap volume swaps in a new version.
      if (filename !== name && filename !== '..data') return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        log.info({ file }, 'the config file changed; reloading');
        changed();
      }, 300);
    });
    watcher.unref();
    watcher.on('error', (error) =>
      log.warn({ err: error.message, file }, 'stopped watching the config file; SIGHUP still reloads it'),
    );
  } catch (error) {
    log.warn({ err: (error as Error).message, file }, 'cannot watch the config file; SIGHUP still reloads it');
  }
}

async function reload(
  gateway: RunningGateway,
  file: string,
  overrides: { host?: string; port?: string },
  log: Logger,
): Promise<void> {
  try {
    const next = await loadConfigFile(file);
    if (overrides.host !== undefined) next.listen.host = overrides.host;
    if (overrides.port !== undefined) next.listen.port = Number(overrides.port);
    const exposed = exposureProblem(next);
    if (exposed) throw new ConfigError(file, [exposed]);
    const needRestart = await gateway.reload(next);
    log.info({ file }, 'reloaded the config');
    if (needRestart.length)
      log.warn({ sections: needRestart }, 'these sections changed but take effect only after a restart');
  } catch (error) {
    const problems = error instanceof ConfigError ? error.problems : [(error as Error).message];
    for (const problem of problems) log.error({ file, problem }, 'reload refused; the running config stays in place');
  }
}

/** A missing config file, and the three ways on: create one from the bundled example, point at one, or --stdio. */
function withoutConfigFile(error: ConfigFileMissing, defaulted: boolean): string {
  const example = shipped('gateway.config.yaml');
  const reference = shipped('docs/configuration.md') ?? 'docs/configuration.md in the mcp-gateway sources';
  return [
    error.message +
      (defaulted ? ' (without --config, the gateway reads gateway.config.yaml in the current folder)' : ''),
    example
      ? `  To create it, start from the bundled example and list your servers in it: cp ${example} ${error.resolved}`
      : `  To create it, list your servers in it: servers: { mine: { command: node, args: [server.js] } }`,
    `  Every key is described in ${reference}`,
    '  To use a file elsewhere: mcp-gateway --config FILE',
    '  To bridge one stdio server with no config file at all: mcp-gateway --stdio "node server.js"',
  ].join('\n');
}

/** A file shipped with the gateway (the package's top folder holds package.json), if it is there. */
function shipped(relative: string): string | undefined {
  let folder = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(folder, 'package.json'))) {
    const parent = path.dirname(folder);
    if (parent === folder) return undefined;
    folder = parent;
  }
  const file = path.join(folder, relative);
  return existsSync(file) ? file : undefined;
}

function stdioConfig(commandLine: string, name: string): GatewayConfig {
  if (!SERVER_NAME.test(name))
    usageError(`--name must be 1-32 characters of A-Z a-z 0-9 _ - (got ${JSON.stringify(name)})`);
  // Quoted the way a shell would, but run without one: $VARS stay as written, operators are refused.
  const words = parseShellWords(commandLine, (variable) => `$${variable}`);
  if (words.some((word) => typeof word !== 'string')) {
    usageError(`--stdio runs one program without a shell; for pipes, & or globs use one: --stdio "sh -c '...'"`);
  }
  const [command, ...args] = words as string[];
  if (!command) usageError('--stdio needs a command line, for example --stdio "node server.js"');
  return parseConfig({ servers: { [name]: { command, args } } }, '--stdio', process.cwd());
}

await main();
