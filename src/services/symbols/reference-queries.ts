// Reference queries, one per grammar: our own, in the spirit of each grammar's queries/tags.scm (@reference.call,
// @reference.class …) and locals.scm (@local.scope, @local.definition), with one capture convention so the
// collector stays language-free:
//   @call @reference @type @import @export @field @declaration  a name used that way (REFERENCE_KINDS)
//   @scope   a function (or block) whose own names are locals     @local   a name declared in its innermost scope
//   @skip    a name that is no use of anything (a parameter of a prototype, a keyword argument, an enumerator)
//   @source  an include or import specifier                       @macro   a C macro body, read by a small lexer
//   @ignore  a module path (`java.util`, `crate::store`): the words in it that are not @import name no definition
// A node several patterns capture takes the strongest kind (see reference-collect.ts); definitions' own names
// (the outline query's @name) are never references.

const JS_SCOPES = '[(function_declaration) (generator_function_declaration) (function_expression) (arrow_function) (method_definition) (generator_function) (catch_clause) (statement_block)] @scope'

const JS_COMMON = `
${JS_SCOPES}
(arrow_function parameter: (identifier) @local)
(catch_clause parameter: (identifier) @local)
(variable_declarator name: (identifier) @local)
(shorthand_property_identifier_pattern) @local
(array_pattern (identifier) @local)
(pair_pattern value: (identifier) @local)
(for_in_statement left: (identifier) @local)
(import_specifier name: (identifier) @import)
(import_specifier alias: (identifier) @import)
(import_clause (identifier) @import)
(namespace_import (identifier) @import)
(export_specifier name: (identifier) @export)
(export_statement value: (identifier) @export)
(import_statement source: (string (string_fragment) @source))
(export_statement source: (string (string_fragment) @source))
(call_expression function: (identifier) @call)
(call_expression function: (member_expression property: (property_identifier) @call))
(new_expression constructor: (identifier) @call)
(member_expression property: (property_identifier) @field)
(shorthand_property_identifier) @reference
(identifier) @reference
`

const JAVASCRIPT = `${JS_COMMON}
(formal_parameters [(identifier) @local (assignment_pattern left: (identifier) @local) (rest_pattern (identifier) @local)])
`

const TYPESCRIPT = `${JS_COMMON}
(required_parameter pattern: [(identifier) @local (rest_pattern (identifier) @local)])
(optional_parameter pattern: (identifier) @local)
(type_parameter name: (type_identifier) @local)
(new_expression constructor: (member_expression property: (property_identifier) @call))
(type_identifier) @type
`

const PYTHON = `
[(function_definition) (lambda)] @scope
(parameters [(identifier) @local (default_parameter name: (identifier) @local) (typed_parameter (identifier) @local) (typed_default_parameter name: (identifier) @local) (list_splat_pattern (identifier) @local) (dictionary_splat_pattern (identifier) @local)])
(lambda_parameters (identifier) @local)
(function_definition body: (block (expression_statement (assignment left: (identifier) @local))))
(for_statement left: (identifier) @local)
(keyword_argument name: (identifier) @skip)
(import_from_statement module_name: (_) @source @ignore)
(import_statement name: (dotted_name) @source @ignore)
(import_statement name: (aliased_import name: (dotted_name) @source @ignore))
(import_statement name: (dotted_name . (identifier) @import))
(import_from_statement name: (dotted_name (identifier) @import))
(import_from_statement name: (aliased_import name: (dotted_name (identifier) @import)))
(aliased_import alias: (identifier) @import)
(call function: (identifier) @call)
(call function: (attribute attribute: (identifier) @call))
(type (identifier) @type)
(attribute attribute: (identifier) @field)
(identifier) @reference
`

const GO = `
[(function_declaration) (method_declaration) (func_literal) (block)] @scope
(parameter_declaration name: (identifier) @local)
(variadic_parameter_declaration name: (identifier) @local)
(short_var_declaration left: (expression_list (identifier) @local))
(var_declaration (var_spec name: (identifier) @local))
(range_clause left: (expression_list (identifier) @local))
(import_spec path: (interpreted_string_literal) @source)
(package_clause (package_identifier) @skip)
(call_expression function: (identifier) @call)
(call_expression function: (selector_expression field: (field_identifier) @call))
(selector_expression field: (field_identifier) @field)
(type_identifier) @type
(package_identifier) @reference
(identifier) @reference
`

const RUST = `
[(function_item) (closure_expression) (block)] @scope
(parameter pattern: (identifier) @local)
(closure_parameters (identifier) @local)
(let_declaration pattern: (identifier) @local)
(tuple_pattern (identifier) @local)
(for_expression pattern: (identifier) @local)
(use_declaration argument: (_) @source)
(scoped_identifier path: (_) @ignore)
(scoped_use_list path: (_) @ignore)
(use_as_clause path: (_) @ignore)
(mod_item name: (identifier) @source !body)
(use_declaration argument: (scoped_identifier name: (identifier) @import))
(use_declaration argument: (identifier) @import)
(use_list (identifier) @import)
(use_list (scoped_identifier name: (identifier) @import))
(use_as_clause alias: (identifier) @import)
(call_expression function: (identifier) @call)
(call_expression function: (scoped_identifier name: (identifier) @call))
(call_expression function: (field_expression field: (field_identifier) @call))
(macro_invocation macro: (identifier) @call)
(field_expression field: (field_identifier) @field)
(type_identifier) @type
(scoped_identifier name: (identifier) @reference)
(identifier) @reference
`

const JAVA = `
[(method_declaration) (constructor_declaration) (lambda_expression) (block)] @scope
(formal_parameter name: (identifier) @local)
(spread_parameter (variable_declarator name: (identifier) @local))
(local_variable_declaration declarator: (variable_declarator name: (identifier) @local))
(enhanced_for_statement name: (identifier) @local)
(catch_formal_parameter name: (identifier) @local)
(lambda_expression parameters: (identifier) @local)
(inferred_parameters (identifier) @local)
(field_declaration declarator: (variable_declarator name: (identifier) @skip))
(import_declaration (scoped_identifier) @source)
(import_declaration (scoped_identifier scope: (_) @ignore))
(package_declaration) @ignore
(import_declaration (scoped_identifier name: (identifier) @import))
(method_invocation name: (identifier) @call)
(object_creation_expression type: (type_identifier) @call)
(field_access field: (identifier) @field)
(type_identifier) @type
(identifier) @reference
`

// The identifier a C declarator declares, through up to three pointers or an array (`struct cpumask ***masks`).
const C_NAME = (capture: string): string => {
  const pointers = ['(identifier)', '(pointer_declarator declarator: (identifier))', '(pointer_declarator declarator: (pointer_declarator declarator: (identifier)))', '(pointer_declarator declarator: (pointer_declarator declarator: (pointer_declarator declarator: (identifier))))']
  return `[${[...pointers, '(array_declarator declarator: (identifier))', '(array_declarator declarator: (array_declarator declarator: (identifier)))'].map(p => p.replace('(identifier)', `(identifier) @${capture}`)).join(' ')}]`
}
// A prototype's declarator (`void *kmalloc(size_t)`, `void (*fn)(void)`).
const C_FUNCTION_NAME = (capture: string): string => `[(function_declarator declarator: (identifier) @${capture}) (pointer_declarator declarator: (function_declarator declarator: (identifier) @${capture})) (function_declarator declarator: (parenthesized_declarator (pointer_declarator declarator: (identifier) @${capture})))]`

// Parameters anywhere (a prototype's too) are locals: outside a function body they belong to no scope and are
// simply left out. A declaration at the top of a file declares what the outline does not hold (a prototype, a
// global variable); one inside a block declares a local of that block, from there on — but a "prototype" there
// is a call the grammar misread (a statement after an iterator macro: \`for_each_node(j) kfree(p[j]);\`).
const C_COMMON = `
[(function_definition) (preproc_function_def) (compound_statement)] @scope
(parameter_declaration declarator: ${C_NAME('local')})
(parameter_declaration declarator: ${C_FUNCTION_NAME('local')})
(preproc_params (identifier) @local)
(compound_statement (declaration declarator: ${C_NAME('local')}))
(compound_statement (declaration declarator: (init_declarator declarator: ${C_NAME('local')})))
(compound_statement (declaration declarator: ${C_FUNCTION_NAME('call')}))
(for_statement initializer: (declaration declarator: (init_declarator declarator: ${C_NAME('local')})))
(translation_unit (declaration declarator: [${C_NAME('declaration')} ${C_FUNCTION_NAME('declaration')}]))
(translation_unit (declaration declarator: (init_declarator declarator: ${C_NAME('declaration')})))
(enumerator name: (identifier) @skip)
(preproc_include path: (_) @source)
(preproc_arg) @macro
(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (field_identifier) @call))
(field_expression field: (field_identifier) @field)
(type_identifier) @type
(identifier) @reference
`

const C = `${C_COMMON}
(macro_type_specifier name: (identifier) @call)
`

const CPP = `${C_COMMON}
(parameter_declaration declarator: (reference_declarator (identifier) @local))
(compound_statement (declaration declarator: (init_declarator declarator: (reference_declarator (identifier) @local))))
(call_expression function: (qualified_identifier name: (identifier) @call))
(namespace_identifier) @reference
`

/** The reference query of a grammar (by its file name), or undefined for a grammar without one. */
export const REFERENCE_QUERIES: Readonly<Record<string, string>> = {
  'tree-sitter-typescript.wasm': TYPESCRIPT,
  'tree-sitter-tsx.wasm': TYPESCRIPT,
  'tree-sitter-javascript.wasm': JAVASCRIPT,
  'tree-sitter-python.wasm': PYTHON,
  'tree-sitter-go.wasm': GO,
  'tree-sitter-rust.wasm': RUST,
  'tree-sitter-java.wasm': JAVA,
  'tree-sitter-c.wasm': C,
  'tree-sitter-cpp.wasm': CPP
}
