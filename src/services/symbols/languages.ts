import path from 'node:path'

/** Largest source file parsed (about half a second of parsing); get_symbols refuses bigger ones, the index skips them. */
export const MAX_SOURCE_BYTES = 2 * 1024 * 1024

/** Kinds of symbol an outline names, in the order the guide lists them. */
export const SYMBOL_KINDS = ['module', 'class', 'interface', 'trait', 'struct', 'union', 'enum', 'type', 'impl', 'function', 'method', 'macro', 'constant'] as const
/** One of SYMBOL_KINDS. */
export type SymbolKind = typeof SYMBOL_KINDS[number]

/** A language the outline parser reads: its grammar file and its definition query. */
export interface SymbolLanguage {
  /** Display name, e.g. "TypeScript". */
  name: string
  /** Grammar file in @repomix/tree-sitter-wasms/out. */
  grammar: string
  /** Tree-sitter query: each pattern captures `@definition.<kind>` (the whole definition) and `@name`. */
  query: string
  /**
   * C and C++ are scanned before parsing (c-source.ts): annotation macros and the comments of continued `#define`s
   * blanked; C's statement macros rewritten too, and its outline checked against its braces (c-repair.ts).
   */
  dialect?: Dialect
}

/** How a C-family file is prepared for the grammar: `c` in full, `c++` its annotations and directive comments only. */
export type Dialect = 'c' | 'c++'

// The queries are our own compact versions of each grammar's queries/tags.scm: definitions only, no
// references, and one capture convention so the outline code stays language-free. A name that is itself a
// path (`Foo::bar` in C++, a Go receiver) is left as the grammar spells it.

const FUNCTION_VALUE = '[(arrow_function) (function_expression) (generator_function)]'

const JS_COMMON = `
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(method_definition name: (_) @name) @definition.method
(lexical_declaration (variable_declarator name: (identifier) @name value: ${FUNCTION_VALUE})) @definition.function
(variable_declaration (variable_declarator name: (identifier) @name value: ${FUNCTION_VALUE})) @definition.function
(program (lexical_declaration "const" (variable_declarator name: (identifier) @name)) @definition.constant)
(program (export_statement declaration: (lexical_declaration "const" (variable_declarator name: (identifier) @name)) @definition.constant))
`

const JAVASCRIPT = `${JS_COMMON}
(class_declaration name: (identifier) @name) @definition.class
`

const TYPESCRIPT = `${JS_COMMON}
(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(internal_module name: (_) @name) @definition.module
(abstract_method_signature name: (_) @name) @definition.method
(method_signature name: (_) @name) @definition.method
(function_signature name: (identifier) @name) @definition.function
`

// A name bound to a lambda (`H = lambda x: md5(x)`) is a function, as ctags reads it.
const PYTHON = `
(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
(assignment left: (identifier) @name right: (lambda)) @definition.function
(module (expression_statement (assignment left: (identifier) @name) @definition.constant))
`

const GO = `
(function_declaration name: (identifier) @name) @definition.function
(method_declaration receiver: (parameter_list (parameter_declaration type: [(type_identifier) @container (pointer_type (type_identifier) @container) (generic_type type: (type_identifier) @container) (pointer_type (generic_type type: (type_identifier) @container))])) name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name type: [(type_identifier) (qualified_type) (function_type) (map_type) (slice_type) (array_type) (pointer_type) (channel_type) (generic_type)]) @definition.type
(type_alias name: (type_identifier) @name) @definition.type
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
`

const RUST = `
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.union
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
(impl_item type: (_) @name) @definition.impl
(mod_item name: (identifier) @name) @definition.module
(macro_definition name: (identifier) @name) @definition.macro
(type_item name: (type_identifier) @name) @definition.type
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
`

const JAVA = `
(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
`

// C declarators nest: `int *f(void)` is a pointer declarator around the function declarator. The name is an
// identifier — parenthesised (`int (atomic_read)(…)`), or the head of a function that returns a function pointer
// (`void (*ctor(int shift))(void *)`) — or a macro call making it (`BTREE_FN(init)(…)`), shown as written. C++ takes
// any declarator (qualified names, operators, destructors).
const C_NAME = `[
  (identifier) @name
  (function_declarator) @name
  (parenthesized_declarator (identifier) @name)
  (parenthesized_declarator (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
]`
const declarators = (name: string): string => `[
  (function_declarator declarator: ${name})
  (pointer_declarator declarator: (function_declarator declarator: ${name}))
  (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: ${name})))
]`

// A function whose head holds an attribute macro the scan does not know (`__alloc_size(1) void *kmalloc(…)`) parses
// as an ERROR node ending in its declarator, followed by the body: that shape is a definition too.
const C_COMMON = `
((ERROR [
  (function_declarator declarator: (identifier) @name)
  (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
] .) @definition.function . (compound_statement) @body)
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.union
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(type_definition declarator: (type_identifier) @name) @definition.type
(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro
`

// C only, where the outline is checked against the braces (c-repair.ts), which leaves out what these shapes match
// inside a function body:
// - a head an unknown word splits (`static int __init_memblock\nf(void)`: a declaration missing its `;`, then the
//   function) starts at that declaration;
// - a function made by a macro (`SYSCALL_DEFINE0(getpid) { … }`, `SYSCALL_DEFINE1(umask, int, mask) { … }`) is
//   named by the macro, as ctags names it: the grammar reads a type and a parenthesised name, or a call missing its
//   `;` and then a block.
const C = `
((declaration (MISSING ";"))? @head . (function_definition declarator: ${declarators(C_NAME)}) @definition.function)
((declaration (MISSING ";"))? @head . (function_definition type: (type_identifier) @name declarator: (parenthesized_declarator)) @definition.function)
((expression_statement (call_expression function: (identifier) @name)) @definition.function . (compound_statement) @body)
${C_COMMON}`

const CPP = `
(function_definition declarator: ${declarators('(_) @name')}) @definition.function
${C_COMMON}
(function_definition declarator: (reference_declarator (function_declarator declarator: (_) @name))) @definition.function
(class_specifier name: (type_identifier) @name body: (_)) @definition.class
(namespace_definition name: (_) @name) @definition.module
(alias_declaration name: (type_identifier) @name) @definition.type
`

const TYPESCRIPT_LANGUAGE: SymbolLanguage = { name: 'TypeScript', grammar: 'tree-sitter-typescript.wasm', query: TYPESCRIPT }
const JAVASCRIPT_LANGUAGE: SymbolLanguage = { name: 'JavaScript', grammar: 'tree-sitter-javascript.wasm', query: JAVASCRIPT }
const CPP_LANGUAGE: SymbolLanguage = { name: 'C++', grammar: 'tree-sitter-cpp.wasm', query: CPP, dialect: 'c++' }
const C_LANGUAGE: SymbolLanguage = { name: 'C', grammar: 'tree-sitter-c.wasm', query: C, dialect: 'c' }

/** File extension → language. `.h` is read as C (the kernel's headers are); C++ headers use .hpp/.hh. */
export const SYMBOL_LANGUAGES: ReadonlyMap<string, SymbolLanguage> = new Map([
  ['.ts', TYPESCRIPT_LANGUAGE],
  ['.mts', TYPESCRIPT_LANGUAGE],
  ['.cts', TYPESCRIPT_LANGUAGE],
  ['.tsx', { name: 'TSX', grammar: 'tree-sitter-tsx.wasm', query: TYPESCRIPT }],
  ['.js', JAVASCRIPT_LANGUAGE],
  ['.mjs', JAVASCRIPT_LANGUAGE],
  ['.cjs', JAVASCRIPT_LANGUAGE],
  ['.jsx', JAVASCRIPT_LANGUAGE],
  ['.py', { name: 'Python', grammar: 'tree-sitter-python.wasm', query: PYTHON }],
  ['.pyi', { name: 'Python', grammar: 'tree-sitter-python.wasm', query: PYTHON }],
  ['.go', { name: 'Go', grammar: 'tree-sitter-go.wasm', query: GO }],
  ['.rs', { name: 'Rust', grammar: 'tree-sitter-rust.wasm', query: RUST }],
  ['.java', { name: 'Java', grammar: 'tree-sitter-java.wasm', query: JAVA }],
  ['.c', C_LANGUAGE],
  ['.h', C_LANGUAGE],
  ['.cc', CPP_LANGUAGE],
  ['.cpp', CPP_LANGUAGE],
  ['.cxx', CPP_LANGUAGE],
  ['.c++', CPP_LANGUAGE],
  ['.hpp', CPP_LANGUAGE],
  ['.hh', CPP_LANGUAGE],
  ['.hxx', CPP_LANGUAGE],
  ['.h++', CPP_LANGUAGE]
])

/** The language of a path by its extension (case-insensitive), or undefined. */
export function symbolLanguageOf (file: string): SymbolLanguage | undefined {
  return SYMBOL_LANGUAGES.get(path.extname(file).toLowerCase())
}

/** The languages read, for error messages: "TypeScript (.ts, .mts, .cts), …". */
export function supportedLanguages (): string {
  const byName = new Map<string, string[]>()
  for (const [extension, language] of SYMBOL_LANGUAGES) byName.set(language.name, [...(byName.get(language.name) ?? []), extension])
  return [...byName].map(([name, extensions]) => `${name} (${extensions.join(' ')})`).join(', ')
}
