import type { ToolCatalog } from '../services/catalog.js'
import type { Tokenizer } from '../services/tokenizer/index.js'
import { checkBudget, formatViolation, lintConventions, TOOL_TOKEN_ALLOWANCE, type Violation } from './conventions.js'
import type { DocState } from './docs.js'
import type { UsageGuide } from './usage-guide.js'

/** Rule label for documentation problems (overlay and states), beside the six conventions. */
export const DOCS_RULE = { id: 7, name: 'docs-complete' }

/** Everything `workspace-mcp check` found. */
export interface CheckReport {
  /** Tool name → documentation state. */
  states: Record<string, DocState>
  /** Tokens of each tool's tools/list entry (rule 5 holds each to `allowance`). */
  toolTokens: Record<string, number>
  /** Most tokens one tool's entry may cost. */
  allowance: number
  /** tools/list size in tokens, and its budget (allowance × tools). */
  tokens: number
  budget: number
  violations: Violation[]
}

/**
 * Runs the six conventions (rule 5: the per-tool token allowance) and the overlay checks. An overlay
 * entry is optional (without one the guide documents a tool from its definition); one that exists must be Complete.
 */
export async function runChecks (catalog: ToolCatalog, guide: UsageGuide, tokenizer: Tokenizer): Promise<CheckReport> {
  const violations = lintConventions(catalog.entries())
  const budget = await checkBudget(catalog.manifestJson(), tokenizer)
  violations.push(...budget.violations)

  const overlay = guide.overlay()
  if (overlay.status !== 'ok') {
    violations.push({ tool: '(overlay)', rule: DOCS_RULE, message: `${overlay.file} is ${overlay.status}; fix it or point --docs-file at the overlay` })
  }
  const docs = guide.docs(catalog)
  for (const problem of docs.problems) violations.push({ tool: problem.tool, rule: DOCS_RULE, message: problem.message })
  const states: Record<string, DocState> = {}
  // docs.tools holds every catalog entry, in catalog order.
  for (const [name, { state }] of docs.tools) {
    states[name] = state
    // A half-written entry is unfinished work, while no entry is a choice: the definition's text suffices.
    if (state === 'Documented') violations.push({ tool: name, rule: DOCS_RULE, message: `is Documented; add examples and a returns note under tools.${name} in ${overlay.file}` })
  }
  return { states, toolTokens: budget.toolTokens, allowance: TOOL_TOKEN_ALLOWANCE, tokens: budget.tokens, budget: budget.budget, violations }
}

/** The report as lines of text: states and tokens, then one line per violation and a verdict. */
export function formatReport (report: CheckReport): string {
  const names = Object.keys(report.states)
  const width = Math.max(0, ...names.map(n => n.length))
  const lines = ['Documentation states (and tools/list tokens per tool):', ...names.map(n => `  ${n.padEnd(width)}  ${report.states[n].padEnd(10)}  ${report.toolTokens[n]} tokens`)]
  lines.push(`tools/list: ${report.tokens} tokens; allowance ${report.allowance} per tool (${report.budget} for ${names.length} tools)`)
  if (report.violations.length === 0) {
    const bare = names.filter(n => report.states[n] === 'SchemaOnly')
    const docs = bare.length === 0
      ? 'every tool Complete'
      : `no docs/tools.yaml entry for ${bare.join(', ')} (optional: the guide shows the definition)`
    lines.push(`check passed: ${names.length} tools, 6 conventions, ${docs}`)
  } else {
    lines.push('', ...report.violations.map(formatViolation), '', `check failed: ${report.violations.length} violation${report.violations.length === 1 ? '' : 's'}`)
  }
  return lines.join('\n')
}
