// src/profiles/: views over /mcp (/profiles/<name>/mcp, /search/mcp): the profiles in force, what each shows,
// its server/discover, and the checks a profile's settings must pass at load.
export { profileProblems } from './profile-checks.js';
export { describeView } from './profile-discover.js';
export { ProfileSet } from './profile-set.js';
export { isListMethod, SEARCH_PROFILE } from './profile.js';
export type { ListKind, NamedKind, Profile } from './profile.js';
