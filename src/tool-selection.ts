import { APP_ERR_CONFIG_INVALID } from './base/errors.js'
import { configLabel, type Config } from './base/config.js'
import { closestName } from './services/edit-distance.js'

/** What `--tools` and `--exclude-tools` ask of a tool list. */
export type ToolChoice = Pick<Config, 'tools' | 'excludeTools'>

/**
 * The tools the operator leaves out of `known` (every tool the server defines, served or not): all but `--tools`
 * when it is given, then `--exclude-tools` (applied after it, so the two compose: a list in the environment, one
 * tool less on the command line). A name that is not a tool, or a choice that leaves none, is bad usage.
 */
export function excludedTools (known: readonly string[], choice: ToolChoice): Set<string> {
  const problems = [...unknownNames(known, choice.tools, 'tools'), ...unknownNames(known, choice.excludeTools, 'excludeTools')]
  if (problems.length > 0) throw new APP_ERR_CONFIG_INVALID(`${problems.join('; ')} (the tools: ${known.join(', ')})`)
  const excluded = new Set(choice.tools.length === 0 ? [] : known.filter(name => !choice.tools.includes(name)))
  for (const name of choice.excludeTools) excluded.add(name)
  if (excluded.size === known.length) {
    throw new APP_ERR_CONFIG_INVALID(`${configLabel('tools')} and ${configLabel('excludeTools')} leave no tool to serve; name at least one tool that is not excluded`)
  }
  return excluded
}

function unknownNames (known: readonly string[], names: readonly string[], key: 'tools' | 'excludeTools'): string[] {
  return [...new Set(names)].filter(name => !known.includes(name)).map(name => {
    const close = closestName(name, known)
    return `${configLabel(key)}: "${name.slice(0, 64)}" is not a tool${close === undefined ? '' : ` (did you mean ${close}?)`}`
  })
}
