import createError, { type FastifyErrorConstructor } from '@fastify/error'

// Boot: stop startup, never reach a client.
/** Invalid configuration value (env var or flag). */
export const APP_ERR_CONFIG_INVALID = createError<[string]>('APP_ERR_CONFIG_INVALID', 'Invalid configuration: %s', 500, TypeError)
/** Two tools, resources or prompts share one name. */
export const APP_ERR_TOOL_DUPLICATE = createError<[string]>('APP_ERR_TOOL_DUPLICATE', "'%s' is registered twice", 500, TypeError)
/** A published schema failed the client-compatibility check. */
export const APP_ERR_SCHEMA_INCOMPATIBLE = createError<[string]>('APP_ERR_SCHEMA_INCOMPATIBLE', 'Published schema is not client-compatible: %s', 500, TypeError)
/** A tool definition is malformed (bad name, missing description …). */
export const APP_ERR_TOOL_DEFINITION = createError<[string]>('APP_ERR_TOOL_DEFINITION', 'Invalid tool definition: %s', 500, TypeError)

// Protocol: mapped to JSON-RPC codes by toRpcError() in src/mcp/wire/rpc.ts.
/** JSON text that does not parse. */
export const APP_ERR_PARSE = createError<[string]>('APP_ERR_PARSE', 'Parse error: %s', 400)
/** A message that is not a valid JSON-RPC 2.0 request or notification. */
export const APP_ERR_INVALID_REQUEST = createError<[string]>('APP_ERR_INVALID_REQUEST', 'Invalid Request: %s', 400)
/** A method the server does not implement. */
export const APP_ERR_UNKNOWN_METHOD = createError<[string]>('APP_ERR_UNKNOWN_METHOD', 'Method not found: %s', 404)
/** A tool name that is not registered (or whose services are not configured). */
export const APP_ERR_UNKNOWN_TOOL = createError<[string]>('APP_ERR_UNKNOWN_TOOL', 'Unknown tool: %s', 404)
/** Request parameters that are structurally wrong (not tool arguments). */
export const APP_ERR_INVALID_PARAMS = createError<[string]>('APP_ERR_INVALID_PARAMS', 'Invalid params: %s', 400)
/** A resource URI that no resource or template serves. */
export const APP_ERR_RESOURCE_NOT_FOUND = createError<[string]>('APP_ERR_RESOURCE_NOT_FOUND', 'Resource not found: %s', 404)
/** A request other than initialize/ping on a session that is not initialized. */
export const APP_ERR_NOT_INITIALIZED = createError<[string]>('APP_ERR_NOT_INITIALIZED', 'Server not initialized: %s', 400)

// Transport (HTTP only): statusCode is the HTTP status, the body is a JSON-RPC error with id null.
/** A request target that is not RFC 9112 origin form (or absolute form) of RFC 3986 characters, or that the router could read two ways. */
export const APP_ERR_BAD_REQUEST_TARGET = createError<[string]>('APP_ERR_BAD_REQUEST_TARGET', 'Bad Request: %s', 400)
/** A JSON body in a charset other than UTF-8 (RFC 8259 §8.1: JSON exchanged between systems is UTF-8). */
export const APP_ERR_UNSUPPORTED_MEDIA_TYPE = createError<[string]>('APP_ERR_UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type: %s', 415)
/** Origin header not on the allow-list (DNS-rebinding defence). */
export const APP_ERR_ORIGIN_FORBIDDEN = createError<[string]>('APP_ERR_ORIGIN_FORBIDDEN', "Origin '%s' is not allowed", 403)
/** Host header not on the allow-list for a loopback bind. */
export const APP_ERR_HOST_FORBIDDEN = createError<[string]>('APP_ERR_HOST_FORBIDDEN', "Host '%s' is not allowed", 403)
/** MCP-Session-Id that was never issued or has ended. */
export const APP_ERR_SESSION_NOT_FOUND = createError('APP_ERR_SESSION_NOT_FOUND', 'Session not found', 404)
/** A non-initialize request without an MCP-Session-Id in stateful mode. */
export const APP_ERR_SESSION_REQUIRED = createError('APP_ERR_SESSION_REQUIRED', 'Bad Request: Mcp-Session-Id header is required', 400)
/** Session cap reached; the client should retry later. */
export const APP_ERR_SESSION_LIMIT = createError('APP_ERR_SESSION_LIMIT', 'Too many sessions; retry later', 503)
/** One client holds as many sessions as it may (`maxSessionsPerClient`); the others are not affected. */
export const APP_ERR_CLIENT_SESSION_LIMIT = createError<[string]>('APP_ERR_CLIENT_SESSION_LIMIT', 'Too many sessions for this client (limit %s); end one (DELETE) or retry later', 429)
/** Too many requests from one client in the rate-limit window (`rateLimitPerMinute`). */
export const APP_ERR_RATE_LIMITED = createError<[string]>('APP_ERR_RATE_LIMITED', 'Too many requests from this client; retry in %s', 429)
/** MCP-Protocol-Version header with a version this server does not speak. */
export const APP_ERR_PROTOCOL_VERSION = createError<[string]>('APP_ERR_PROTOCOL_VERSION', 'Bad Request: Unsupported protocol version: %s', 400)
/** HTTP method not allowed on the MCP endpoint in this mode. */
export const APP_ERR_METHOD_NOT_ALLOWED = createError<[string]>('APP_ERR_METHOD_NOT_ALLOWED', 'Method %s not allowed', 405)
/** The request's Accept header rules out what the endpoint answers with (JSON for POST, SSE for GET). */
export const APP_ERR_NOT_ACCEPTABLE = createError<[string]>('APP_ERR_NOT_ACCEPTABLE', 'Not Acceptable: %s', 406)
/** A second GET stream for a session that already has one open. */
export const APP_ERR_STREAM_CONFLICT = createError('APP_ERR_STREAM_CONFLICT', 'Conflict: this session already has an open GET stream', 409)
/** Too many POSTs in flight (`maxInflightRequests`); the client should retry shortly. */
export const APP_ERR_OVERLOADED = createError('APP_ERR_OVERLOADED', 'Server overloaded: too many requests in flight; retry later', 503)
/** The process uses more memory than `maxHeapUsedPercent` / `maxRssMb` allow; the client should retry shortly. */
export const APP_ERR_MEMORY_PRESSURE = createError('APP_ERR_MEMORY_PRESSURE', 'Server overloaded: memory is short; retry later', 503)
/** A POST whose body did not arrive within `bodyTimeoutMs` of its headers (408, connection closed). */
export const APP_ERR_BODY_TIMEOUT = createError<[string]>('APP_ERR_BODY_TIMEOUT', 'Request Timeout: the body did not arrive within %s ms of the headers; send the whole request at once', 408)
/** No bearer token, or one that is invalid, expired or meant for another server (401 + WWW-Authenticate). */
export const APP_ERR_UNAUTHORIZED = createError<[string]>('APP_ERR_UNAUTHORIZED', 'Unauthorized: %s', 401)
/** A valid token without the scope this server requires (403 + WWW-Authenticate insufficient_scope). */
export const APP_ERR_INSUFFICIENT_SCOPE = createError<[string]>('APP_ERR_INSUFFICIENT_SCOPE', "Forbidden: the token lacks the '%s' scope", 403)
/** The issuer's signing keys (JWKS) cannot be fetched, so a JWT can be neither accepted nor refused (503 + Retry-After). */
export const APP_ERR_AUTH_UNAVAILABLE = createError('APP_ERR_AUTH_UNAVAILABLE', 'Service Unavailable: the token issuer\'s signing keys cannot be fetched; retry later', 503)
/** The shared session store (Redis) failed to save or load a session record (503 + Retry-After). */
export const APP_ERR_SESSION_STORE_UNAVAILABLE = createError('APP_ERR_SESSION_STORE_UNAVAILABLE', 'Service Unavailable: the session store cannot be reached; retry later', 503)
/** The server is draining for shutdown and takes no new requests. */
export const APP_ERR_SHUTTING_DOWN = createError('APP_ERR_SHUTTING_DOWN', 'Server is shutting down; retry on another instance', 503)

// Protocol 2026-07-28's own refusals (its JSON-RPC numbers are chosen in src/mcp/wire/rpc.ts, with every other).
/** A routing header and the body disagree (or a required header is absent). */
export const APP_ERR_HEADER_MISMATCH = createError<[string]>('APP_ERR_HEADER_MISMATCH', 'the request headers and body disagree: %s', 400)
/** The request needs client capabilities its envelope did not declare. */
export const APP_ERR_MISSING_CLIENT_CAPABILITY = createError<[string]>('APP_ERR_MISSING_CLIENT_CAPABILITY', 'this request needs client capabilities the request did not declare: %s', 400)
/** The envelope names a protocol version this server does not speak. */
export const APP_ERR_UNSUPPORTED_VERSION = createError<[string]>('APP_ERR_UNSUPPORTED_VERSION', 'unsupported protocol version %s', 400)
/** No HTTP route here. */
export const APP_ERR_NOT_FOUND = createError<[string]>('APP_ERR_NOT_FOUND', 'Not Found: %s', 404)

/** An error with the JSON-RPC `data` the client gets beside its message. */
export function withRpcData<E extends Error> (err: E, data: unknown): E {
  return Object.assign(err, { rpcData: data })
}

// Tool execution: reaches the model as `isError: true` text, verbatim.
/** A tool failure whose message is written for the model. */
export const APP_ERR_TOOL = createError<[string, { cause: unknown }?]>('APP_ERR_TOOL', '%s', 400)

/** Stable codes a tool error can carry; documented in the README and asserted by tests. */
export const TOOL_ERROR_CODES = [
  'INVALID_ARGUMENT',
  'UNKNOWN_ARGUMENT',
  'TIMEOUT',
  'CANCELLED',
  'INTERNAL',
  'PATH_OUTSIDE_ROOT',
  'SYMLINK_ESCAPES_ROOT',
  'PATH_NOT_FOUND',
  'NOT_A_DIRECTORY',
  'IS_A_DIRECTORY',
  'NOT_A_REGULAR_FILE',
  'BINARY_FILE',
  'FILE_TOO_LARGE',
  'PERMISSION_DENIED',
  'HARD_LINK_REFUSED',
  'INVALID_REGEX',
  'UNSUPPORTED_REGEX_FEATURE',
  'REGEX_TOO_COMPLEX',
  'INVALID_GLOB',
  'TOO_MANY_ITEMS',
  'INVALID_PATH',
  'SEARCH_FAILED',
  'BUSY',
  'CLIENT_CAPABILITY_MISSING',
  'CLIENT_REQUEST_FAILED',
  'INPUT_ROUNDS_EXCEEDED',
  'REF_NOT_FOUND',
  'NOT_A_REPOSITORY',
  'UNKNOWN_ROOT',
  'GIT_FAILED',
  'UNSUPPORTED_LANGUAGE',
  'PARSE_FAILED',
  'EMBEDDINGS_NOT_CONFIGURED',
  'EMBEDDINGS_FAILED',
  'INDEX_UNAVAILABLE',
  'CODE_INDEX_OFF',
  'GIT_NOT_FOUND',
  'RIPGREP_NOT_FOUND',
  'PARSER_NOT_INSTALLED',
  'TOOL_EXCLUDED',
  'SHUTTING_DOWN'
] as const

/** One of TOOL_ERROR_CODES. */
export type ToolErrorCode = typeof TOOL_ERROR_CODES[number]

/**
 * What a caller can do next after an error a service raised, as a fact: the tool layer says it in a sentence
 * that names the tool to call (tool-api/next-step.ts), so services never name tools.
 */
export type NextStep =
  | 'describe-path' | 'list-now' | 'list-layout' | 'list-from-root' | 'list-links' | 'inside-only' | 'list-or-find'
  | 'list-the-directory' | 'list-commits' | 'name-a-commit' | 'read-or-grep' | 'describe-file' | 'describe-damaged'
  | 'describe-damaged-or-encrypted' | 'rank-by-words' | 'grep-for-definitions' | 'list-and-read' | 'read-without-history'

/** A next step, with the path and argument it is about. */
export interface NextStepFacts {
  step: NextStep
  /** The path as the client sees it. */
  path?: string
  /** The argument that carried it, e.g. `paths[2]`. */
  field?: string
}

/** A tool error: APP_ERR_TOOL plus the stable code the text starts with. */
export interface ToolError extends Error {
  code: 'APP_ERR_TOOL'
  toolCode: ToolErrorCode
  /** A next step the tool layer has yet to add to the text as its hint. */
  next?: NextStepFacts
  /** The hint the text ends with, as given (` Hint: <hint>.`). */
  hint?: string
}

/** The text ending in a full stop (or another sentence end). */
export const sentence = (s: string): string => /[.!?]$/.test(s) ? s : `${s}.`

/**
 * Builds the model-facing error `ERROR <CODE>: <message>. Hint: <next call>`. A service gives the next step as
 * facts instead of a hint naming a tool; the tool layer adds that hint (tool-api/next-step.ts). `cause`, the error
 * behind it, reaches the logs (pino prints its message and stack after the error's own), never the model.
 */
export function toolError (toolCode: ToolErrorCode, message: string, hint?: string | NextStepFacts, cause?: unknown): ToolError {
  const text = `ERROR ${toolCode}: ${sentence(message)}${typeof hint === 'string' && hint !== '' ? ` Hint: ${sentence(hint)}` : ''}`
  const err = cause === undefined ? new APP_ERR_TOOL(text) : new APP_ERR_TOOL(text, { cause })
  return Object.assign(err, { toolCode }, typeof hint === 'object' ? { next: hint } : hint === undefined || hint === '' ? {} : { hint }) as ToolError
}

/** True for errors raised with toolError() (or APP_ERR_TOOL). */
export function isToolError (err: unknown): err is ToolError {
  return err instanceof Error && (err as { code?: unknown }).code === 'APP_ERR_TOOL'
}

/** Every constructor above, keyed by its code (the README error table is checked against it). */
export const ERROR_CONSTRUCTORS: Record<string, FastifyErrorConstructor> = {
  APP_ERR_CONFIG_INVALID,
  APP_ERR_TOOL_DUPLICATE,
  APP_ERR_SCHEMA_INCOMPATIBLE,
  APP_ERR_TOOL_DEFINITION,
  APP_ERR_PARSE,
  APP_ERR_INVALID_REQUEST,
  APP_ERR_UNKNOWN_METHOD,
  APP_ERR_UNKNOWN_TOOL,
  APP_ERR_INVALID_PARAMS,
  APP_ERR_RESOURCE_NOT_FOUND,
  APP_ERR_NOT_INITIALIZED,
  APP_ERR_BAD_REQUEST_TARGET,
  APP_ERR_UNSUPPORTED_MEDIA_TYPE,
  APP_ERR_ORIGIN_FORBIDDEN,
  APP_ERR_HOST_FORBIDDEN,
  APP_ERR_SESSION_NOT_FOUND,
  APP_ERR_SESSION_REQUIRED,
  APP_ERR_SESSION_LIMIT,
  APP_ERR_CLIENT_SESSION_LIMIT,
  APP_ERR_RATE_LIMITED,
  APP_ERR_PROTOCOL_VERSION,
  APP_ERR_METHOD_NOT_ALLOWED,
  APP_ERR_NOT_ACCEPTABLE,
  APP_ERR_STREAM_CONFLICT,
  APP_ERR_OVERLOADED,
  APP_ERR_MEMORY_PRESSURE,
  APP_ERR_BODY_TIMEOUT,
  APP_ERR_UNAUTHORIZED,
  APP_ERR_INSUFFICIENT_SCOPE,
  APP_ERR_AUTH_UNAVAILABLE,
  APP_ERR_SESSION_STORE_UNAVAILABLE,
  APP_ERR_SHUTTING_DOWN,
  APP_ERR_HEADER_MISMATCH,
  APP_ERR_MISSING_CLIENT_CAPABILITY,
  APP_ERR_UNSUPPORTED_VERSION,
  APP_ERR_NOT_FOUND,
  APP_ERR_TOOL
}
