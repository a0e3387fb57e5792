import type { Services } from '../services/index.js'
import type { InputRequiredResult, ToolContent, ToolInput } from './define-tool.js'

/** A declared prompt argument (spec PromptArgument). */
export interface PromptArgument {
  name: string
  description?: string
  required?: boolean
}

/** One prompt message (spec PromptMessage). */
export interface PromptMessage {
  role: 'user' | 'assistant'
  content: ToolContent
}

/** Context handed to prompt renderers. */
export interface PromptContext {
  services: Services
  signal: AbortSignal
  /** The client's answers when this is a later round of a prompts/get that returned inputRequired(). */
  input?: ToolInput
}

/** A rendered prompt (spec GetPromptResult). */
export interface PromptResult { description?: string, messages: PromptMessage[] }

/** A prompt (spec Prompt) and its renderer. */
export interface PromptDefinition {
  name: string
  title?: string
  description?: string
  arguments?: PromptArgument[]
  get(args: Record<string, string>, ctx: PromptContext): Promise<PromptResult | InputRequiredResult> | PromptResult | InputRequiredResult
  /** Completion values for an argument (completion/complete). */
  complete?: Record<string, (value: string, ctx: PromptContext) => string[] | Promise<string[]>>
}

/** Defines a prompt. */
export function definePrompt (definition: PromptDefinition): PromptDefinition {
  return definition
}
