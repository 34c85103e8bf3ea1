// Which cached lists an upstream's notification makes stale.
const LISTS: Record<string, readonly string[]> = {
  'notifications/tools/list_changed': ['tools/list'],
  'notifications/prompts/list_changed': ['prompts/list'],
  'notifications/resources/list_changed': ['resources/list', 'resources/templates/list'],
  'notifications/resources/updated': ['resources/read'],
};

export function changedLists(notificationMethod: string): readonly string[] {
  return LISTS[notificationMethod] ?? [];
}
