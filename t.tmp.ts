import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { configJsonSchema } from './src/config/schema.js';
import { parseConfig } from './src/config/config.js';
const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(configJsonSchema());
const top = Object.keys((configJsonSchema() as any).properties);
for (const f of ['docs/configuration.md','docs/deployment.md','docs/security.md','README.md','docs/design.md','docs/development.md']) {
  const md = readFileSync(f,'utf8');
  let i=0;
  for (const m of md.matchAll(/```ya?ml\n([\s\S]*?)```/g)) {
    i++;
    let doc: any; try { doc = parse(m[1]!); } catch (e) { console.log(f,i,'YAML ERR', String(e).slice(0,80)); continue; }
    if (!doc || typeof doc !== 'object' || Array.isArray(doc) || !Object.keys(doc).every(k => top.includes(k))) { console.log(f,i,'skip', Object.keys(doc??{}).slice(0,4)); continue; }
    const full = doc.servers || doc.mcpServers ? doc : { ...doc, servers: { a: { command: 'node' } } };
    const v = validate(full);
    const vars = new Set<string>(); JSON.stringify(full).replace(/\$\{(?:env:)?([A-Za-z_]\w*)/g, (_, n) => { vars.add(n); return ''; });
    const env = Object.fromEntries([...vars].map(n => [n, /URL/.test(n) ? (/REDIS/.test(n)?'redis://r:6379':'http://10.0.0.1:8080') : /PORT/.test(n) ? '8080' : 'x'.repeat(32)]));
    let l: any = true; try { parseConfig(full, 'd', '/tmp', env); } catch (e) { l = String((e as Error).message).split('\n').slice(1,3).join(' | '); }
    console.log(f,i, 'schema', v, v ? '' : JSON.stringify(validate.errors?.slice(0,2)).slice(0,200), 'load', l);
  }
}
