// Query expansion: the everyday words people use for what tool definitions call something else. A lexical
// index cannot know that a "folder" is a "directory" or that a "PR" is a "pull request"; a short thesaurus of
// such equivalences in the vocabulary of tools (files, code hosting, messaging, web, data) can. Each group is
// a set of words or phrases meaning the same thing; a query word in a group brings in the rest of the group,
// weighted below the words the caller actually wrote (see tool-index.ts). Kept general on purpose: nothing
// here names a particular server or tool.
const GROUPS: readonly string[] = [
  'directory|folder|dir|mkdir',
  'repository|repo',
  'pull request|pr|merge request',
  'image|picture|photo|png|jpg|jpeg',
  'url|link|website|webpage|web page|site|http',
  'delete|remove|erase|forget|drop',
  'create|make|new|add',
  'search|find|look up|lookup|query',
  'get|show|view|display|retrieve|see',
  'list|ls|enumerate|all',
  'edit|modify|change|update|alter',
  'move|rename|mv',
  'write|save|store|record|remember',
  'read|load|cat',
  'send|post|message|msg',
  'email|mail',
  'run|execute|exec|invoke|trigger',
  'diff|difference|compare|changes',
  'log|history|logs',
  'switch|checkout',
  'route|directions|navigate',
  'distance|travel time|how far|how long',
  'coordinates|latitude|longitude|lat|lng',
  'elevation|altitude|height',
  'issue|ticket|bug',
  'user|person|people|member|account',
  'profile|whoami|me',
  'org|organization',
  'vulnerability|vulnerabilities|cve|advisory|security alert',
  'ci|workflow|pipeline|build|actions',
  'sql|database|db|table',
  'javascript|js|script',
  'screenshot|screen capture|capture',
  'reaction|emoji|react',
  'channel|room',
  'time zone|timezone|tz',
  'knowledge graph|memory|entity|entities',
  'web search|search engine|internet|google',
  'text|content|contents',
  'download|fetch|grab|scrape',
  'browse|visit|go to|open url|navigate',
  'click|press|tap',
  'fill|type|enter|input',
  'select|choose|pick|dropdown|option',
  'hover|mouse over',
  'approve|review|accept',
  'reject|decline|request changes',
  'stage|staging|git add',
  'unstage|reset',
  'star|favorite|bookmark',
  'local|nearby|near me|near',
  'place|business|restaurant|shop|store|venue',
  'column|columns|schema|describe',
  'env|environment|variables',
  'notification|notifications|inbox|alert',
  'sum|add up|total|plus',
  'sleep|wait|long running|progress',
];

/** Word → the other words of its group(s), as one string of words ready to be tokenized like a query. */
export type Thesaurus = ReadonlyMap<string, string>;

/**
 * Builds the lookup once, keyed by processed term (lower-cased, stemmed), so a query's processed words are
 * looked up directly. A phrase's words are keyed one by one only when the phrase is a single word.
 */
export function thesaurus(processTerm: (term: string) => string | null): Thesaurus {
  const related = new Map<string, Set<string>>();
  for (const group of GROUPS) {
    const members = group.split('|');
    for (const member of members) {
      if (member.includes(' ')) continue; // a phrase expands others but is not itself looked up
      const key = processTerm(member);
      if (!key) continue;
      const others = related.get(key) ?? new Set<string>();
      for (const other of members) if (other !== member) others.add(other);
      related.set(key, others);
    }
  }
  return new Map([...related].map(([key, others]) => [key, [...others].join(' ')]));
}

/** The words a query's terms bring in, or '' when none of them is in the thesaurus. */
export function expansion(terms: readonly string[], words: Thesaurus): string {
  let extra = '';
  for (const term of terms) {
    const more = words.get(term);
    if (more) extra = extra ? `${extra} ${more}` : more;
  }
  return extra;
}
