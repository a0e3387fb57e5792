import { Type } from '@sinclair/typebox'
import type { MapFile } from '../services/code-index/index.js'
import { nameToken } from '../services/symbols/index.js'
import { fitLargest, MAX_RESPONSE_TOKENS, MIN_RESPONSE_TOKENS, type Rung } from '../tool-kit/budget.js'
import { indexNotes, INDEX_TASK, scopeOf, shownPath } from '../tool-kit/code-index-common.js'
import { defineTool, Inject, type ToolResult } from '../tool-api/define-tool.js'
import { counted, cutLine } from '../tool-kit/format.js'
import { compareText, formatCall } from '../tool-kit/paging.js'
import { rankRepository, type RankedDefinition } from '../tool-kit/repo-rank.js'

/** A scope of more source files than this is shown by its layout only: ranking it would not be cheap. */
export const MAX_RANKED_FILES = 3000
/** Definitions the ranking considers: what the rest of the code can refer to by name. */
const RANKED_KINDS = ['module', 'class', 'interface', 'trait', 'struct', 'union', 'enum', 'type', 'impl', 'function', 'method', 'macro', 'constant']
/** Most definitions a map shows (the budget usually stops it sooner), per file and in all, and folders its layout lists. */
const PER_FILE = 6
const MAX_SHOWN = 400
const MAX_FOLDERS = 24

/** structuredContent of get_repo_map: what the text shows. */
export const GetRepoMapOutput = Type.Object({
  source_files: Type.Integer(),
  languages: Type.Array(Type.Object({ language: Type.String(), files: Type.Integer() })),
  files: Type.Array(Type.Object({
    path: Type.String(),
    definitions: Type.Array(Type.Object({ name: Type.String(), kind: Type.String(), line: Type.Integer(), signature: Type.String(), users: Type.Integer({ description: 'Other files that use its name' }) }))
  }), { description: 'Best ranked first' })
})

const GetRepoMapInput = Type.Object({
  path: Type.Optional(Type.String({ description: 'Folder (or file) to map; the whole workspace by default, e.g. "mm"' })),
  max_response_tokens: Type.Optional(Type.Integer({ minimum: MIN_RESPONSE_TOKENS, maximum: MAX_RESPONSE_TOKENS, default: 4000, description: 'Token budget the map is fitted to, e.g. 4000' })),
  workspace: Inject('workspace'),
  codeIndex: Inject('codeIndex'),
  tokenizer: Inject('tokenizer')
})

interface Shown extends MapFile { shown: string }

/** Source files and their languages per folder one level below the scope (`.`: files at its top), largest first. */
function foldersOf (files: readonly Shown[], base: string): Array<[string, { files: number, languages: Map<string, number> }]> {
  const folders = new Map<string, { files: number, languages: Map<string, number> }>()
  for (const f of files) {
    const rest = base === '' ? f.shown : f.shown.slice(base.length + 1)
    const folder = rest.includes('/') ? rest.slice(0, rest.indexOf('/')) : '.'
    const entry = folders.get(folder) ?? { files: 0, languages: new Map() }
    entry.files++
    entry.languages.set(f.language, (entry.languages.get(f.language) ?? 0) + 1)
    folders.set(folder, entry)
  }
  return [...folders].sort((a, b) => b[1].files - a[1].files || compareText(a[0], b[0]))
}

/** The layout as Markdown lines: each folder with its files and languages, most files first. */
function layout (folders: ReturnType<typeof foldersOf>): string[] {
  const lines = folders.slice(0, MAX_FOLDERS).map(([folder, e]) => `- ${folder === '.' ? '(files at the top)' : `${folder}/`} ${counted(e.files, 'source file')} (${[...e.languages].sort((a, b) => b[1] - a[1]).map(([l]) => l).join(', ')})`)
  if (folders.length > MAX_FOLDERS) lines.push(`- … ${counted(folders.length - MAX_FOLDERS, 'more folder')}`)
  return lines
}

/** An overview of a repository or folder within a token budget: layout, languages and the definitions the rest of the code uses most. */
export const getRepoMap = defineTool({
  name: 'get_repo_map',
  title: 'Get Repository Map',
  category: 'navigation',
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  description: 'Get an overview of a repository or folder in one call, fitted to a token budget: layout, languages, and the definitions the rest of the code uses most, with their signatures.\n\n' +
    'Served from the code index. list_directory lists a folder; get_symbols outlines files; find_references shows where a name is used.',
  input: GetRepoMapInput,
  output: GetRepoMapOutput,
  task: INDEX_TASK,
  timeoutHint: 'map a smaller folder with path',
  examples: [
    { comment: 'What is in this repository, and what matters most?', arguments: {} },
    { comment: 'One folder, in a smaller budget', arguments: { path: 'src/services', max_response_tokens: 2000 } }
  ],
  async run (args, ctx) {
    const { path, max_response_tokens: budget = 4000, workspace, codeIndex, tokenizer } = args
    const scope = await scopeOf(workspace, path, ctx.signal)
    const notes = await indexNotes(codeIndex, ctx)
    const base = scope === undefined ? '' : shownPath(workspace, scope) as string
    const files: Shown[] = []
    for (const f of codeIndex.map.files(scope)) {
      const shown = shownPath(workspace, f.path)
      if (shown !== undefined) files.push({ ...f, shown })
    }
    const languages = new Map<string, number>()
    for (const f of files) languages.set(f.language, (languages.get(f.language) ?? 0) + 1)
    const languageList = [...languages].sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]))
    const byId = new Map(files.map(f => [f.id, f]))
    const folders = foldersOf(files, base)
    let ranked: Array<RankedDefinition & { shown: string }> = []
    if (files.length > MAX_RANKED_FILES) {
      notes.push(`Note: ${base === '' ? 'the workspace' : base} holds ${counted(files.length, 'source file')}; definitions are ranked for at most ${MAX_RANKED_FILES} — map one of the folders above, e.g. ${formatCall('get_repo_map', { path: `${base === '' ? '' : `${base}/`}${(folders.find(([folder]) => folder !== '.') as [string, unknown])[0]}` })}.`)
    } else {
      const tokens = new Map<string, string>()
      const definitions = codeIndex.map.definitions([...byId.keys()], RANKED_KINDS).filter(d => {
        const token = nameToken(d.name)
        if (token !== undefined) tokens.set(d.name, token)
        return token !== undefined
      })
      const uses = codeIndex.map.uses([...new Set(tokens.values())])
      // Uses in files this session does not see are not counted: nothing about them may show.
      const paths = codeIndex.map.paths([...new Set(uses.map(u => u.file))])
      const seen = new Set([...paths].filter(([, real]) => shownPath(workspace, real) !== undefined).map(([id]) => id))
      const visible = uses.filter(u => seen.has(u.file))
      const definers = codeIndex.map.definers([...tokens.keys()])
      // Files by their rank, each with its best definitions: the map leads with the files the code uses most.
      ranked = rankRepository(definitions, visible, name => tokens.get(name) as string, name => definers.get(name) as number)
        .filter(file => file.score > 0)
        .flatMap(file => file.definitions.filter(d => d.score > 0).slice(0, PER_FILE).map(d => ({ ...d, shown: (byId.get(file.id) as Shown).shown })))
    }
    const heading = `# Map of ${base === '' ? 'the workspace' : base} — ${counted(files.length, 'source file')}: ${languageList.map(([l, n]) => `${l} ${n}`).join(', ') || 'none indexed'}`
    const render = (n: number): Rung<Array<{ path: string, definitions: RankedDefinition[] }>> => {
      const groups = new Map<string, RankedDefinition[]>()
      for (const d of ranked.slice(0, n)) groups.set(d.shown, [...(groups.get(d.shown) ?? []), d])
      const lines = [heading, ...notes, '## Layout', ...layout(folders)]
      if (ranked.length > 0) lines.push('## Files and definitions the rest of the code uses most, best first (files by how many of their definitions other files use, and how widely)')
      for (const [file, defs] of groups) {
        lines.push(`${file}:`, ...defs.map(d => `  ${d.line} ${d.kind} ${d.container === null ? '' : `${d.container}.`}${d.name} (used in ${counted(d.users, 'other file')}) — ${cutLine(d.signature, 160)}`))
      }
      if (n < ranked.length) lines.push(`… ${counted(ranked.length - n, 'more ranked definition')} (max_response_tokens=${budget}; raise it, or map a folder with path)`)
      return { text: lines.join('\n'), info: [...groups].map(([file, definitions]) => ({ path: file, definitions })) }
    }
    /* c8 ignore next: the heading, notes and layout alone fit any budget a call may ask for (1,000 tokens and up) */
    const fitted = (await fitLargest(0, Math.min(ranked.length, MAX_SHOWN), render, budget, tokenizer, ctx.signal)) ?? render(0)
    const result: ToolResult = {
      content: [{ type: 'text', text: fitted.text }],
      structuredContent: {
        source_files: files.length,
        languages: languageList.map(([language, n]) => ({ language, files: n })),
        files: fitted.info.map(f => ({ path: f.path, definitions: f.definitions.map(d => ({ name: d.name, kind: d.kind, line: d.line, signature: d.signature, users: d.users })) }))
      }
    }
    return result
  }
})
