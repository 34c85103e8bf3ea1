// Values as a config file and ${VAR} expansion give them: whole numbers and booleans also arrive as strings.
import { z } from 'zod';

export const MiB = 1024 * 1024;

/** A whole number, also when it came from ${VAR} expansion as a string of digits. */
export const int = () =>
  z.preprocess((v) => (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v), z.number().int());
export const positiveMs = z.preprocess(
  (v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v),
  z.number().int().positive(),
);

export const NAME_PART = /^[A-Za-z0-9_-]+$/;

/** true/false, also when it came from ${VAR} expansion as a string. */
export const bool = () => z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean());
