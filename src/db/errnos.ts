/**
 * The MySQL/MariaDB error numbers sonde reacts to (same numbers on both flavors), in one
 * place so collectors and the pool do not each keep their own copy.
 */

/** ER_ACCESS_DENIED_ERROR: wrong user or password. */
export const ER_ACCESS_DENIED = 1045;
/** ER_PARSE_ERROR: "You have an error in your SQL syntax" (a statement this server does not know). */
export const ER_PARSE_ERROR = 1064;
/** ER_UNKNOWN_TABLE: unknown table in information_schema (e.g. a plugin table not loaded). */
export const ER_UNKNOWN_TABLE = 1109;
/** ER_NO_SUCH_TABLE: the table does not exist. */
export const ER_NO_SUCH_TABLE = 1146;
/** ER_UNKNOWN_SYSTEM_VARIABLE: `@@name` of a variable the server does not have. */
export const ER_UNKNOWN_SYSTEM_VARIABLE = 1193;
/** ER_SPECIFIC_ACCESS_DENIED_ERROR: a privilege such as REPLICATION CLIENT is missing. */
export const ER_SPECIFIC_ACCESS_DENIED = 1227;
/** ER_NO_BINARY_LOGGING: "You are not using binary logging". */
export const ER_NO_BINARY_LOGGING = 1381;
