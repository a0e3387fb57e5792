import t from 'tap'
import { excludedTools } from '../src/tool-selection.js'
import { loadConfig, parseConfigFlags } from '../src/base/config.js'

// --tools and --exclude-tools against the tools a server defines: include, then exclude; a typo is bad usage.

const KNOWN = ['list_directory', 'find_files', 'search_regex', 'read_files', 'git_log']
const choose = (argv: string[], env: NodeJS.ProcessEnv = {}) => excludedTools(KNOWN, loadConfig(parseConfigFlags(argv), env, '/tmp'))

t.test('nothing chosen: nothing left out', async (t) => {
  t.same([...choose([])], [])
})

t.test('--tools keeps only those; --exclude-tools is applied after it, and may come from the environment', async (t) => {
  t.same([...choose(['--tools', 'read_files,search_regex'])].sort(), ['find_files', 'git_log', 'list_directory'])
  t.same([...choose(['--exclude-tools', 'git_log'])], ['git_log'])
  t.same([...choose(['--tools', 'read_files, search_regex ,git_log', '--exclude-tools', 'git_log'])].sort(), ['find_files', 'git_log', 'list_directory'])
  t.same([...choose(['--exclude-tools', 'read_files'], { WORKSPACE_MCP_TOOLS: 'read_files,list_directory' })].sort(), ['find_files', 'git_log', 'read_files', 'search_regex'])
  t.same([...choose([], { WORKSPACE_MCP_EXCLUDE_TOOLS: 'git_log' })], ['git_log'])
})

t.test('an unknown name is bad usage naming the flag, the name, its likely fix and the tools', async (t) => {
  t.throws(() => choose(['--tools', 'read_file,serach_regex']), {
    code: 'APP_ERR_CONFIG_INVALID',
    message: /--tools \/ WORKSPACE_MCP_TOOLS: "read_file" is not a tool \(did you mean read_files\?\); --tools \/ WORKSPACE_MCP_TOOLS: "serach_regex" is not a tool \(did you mean search_regex\?\) \(the tools: list_directory, find_files, search_regex, read_files, git_log\)/
  })
  t.throws(() => choose(['--exclude-tools', 'frobnicate']), { code: 'APP_ERR_CONFIG_INVALID', message: /--exclude-tools \/ WORKSPACE_MCP_EXCLUDE_TOOLS: "frobnicate" is not a tool \(the tools:/ })
})

t.test('a choice that leaves no tool is bad usage', async (t) => {
  t.throws(() => choose(['--tools', 'git_log', '--exclude-tools', 'git_log']), { code: 'APP_ERR_CONFIG_INVALID', message: /leave no tool to serve/ })
  t.throws(() => choose(['--exclude-tools', KNOWN.join(',')]), { code: 'APP_ERR_CONFIG_INVALID', message: /leave no tool to serve/ })
})
