// Who is calling, as authentication established it. Everything policy decides is decided about one of these.

export interface Principal {
  readonly id: string;
  readonly groups: readonly string[];
  /** OAuth scopes the token carried (empty for API keys and anonymous callers). */
  readonly scopes: readonly string[];
  readonly via: 'anonymous' | 'api-key' | 'jwt';
}

export const ANONYMOUS_PRINCIPAL: Principal = Object.freeze({
  id: 'anonymous',
  groups: Object.freeze([]),
  scopes: Object.freeze([]),
  via: 'anonymous',
});
