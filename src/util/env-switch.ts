/**
 * An on/off environment variable: `on`, `true`, `yes`, `1` turn it on; `off`, `false`, `no`,
 * `0`, empty or unset leave it off (any case). Another value is undefined: the command line
 * refuses it at boot, naming the variable (envSwitchError).
 */
const ON = /^(on|true|yes|1)$/i;
const OFF = /^(off|false|no|0|)$/i;

export function envSwitch(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const v = (env[name] ?? '').trim();
  if (ON.test(v)) return true;
  return OFF.test(v) ? false : undefined;
}

/** The boot error for a switch variable that is neither on nor off, or undefined. */
export function envSwitchError(env: NodeJS.ProcessEnv, name: string): string | undefined {
  return envSwitch(env, name) === undefined
    ? `invalid value "${env[name] ?? ''}" for ${name}; valid values: on, off`
    : undefined;
}
