// The oracles the outline section measures against: universal-ctags (functions with start and end lines and
// their scope) for every language, and the TypeScript compiler's own parse for TypeScript, where ctags 5.9 gives
// no end lines. Each returns `{ file, name, line, end?, scope? }` per function, `line` being the line of the name.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createInterface } from 'node:readline'

/** ctags' function kinds per language, and the options that make it read files as we do. */
const CTAGS = {
  C: { options: ['--languages=C', '--map-C=+.h', '--kinds-C=f'], kinds: new Set(['function']) },
  // Their owners' kinds stay on: ctags leaves out the scope of a tag whose owner's kind is off.
  Python: { options: ['--languages=Python'], kinds: new Set(['function', 'member']) },
  TypeScript: { options: ['--languages=TypeScript'], kinds: new Set(['function', 'method']) }
}

/** Runs universal-ctags over `files` (absolute paths); resolves with its functions per file. */
export async function ctagsFunctions (language, files) {
  const { options, kinds } = CTAGS[language]
  // --sort=no streams the tags (sorting holds them all in memory: 1.4 GB over the whole Linux tree).
  const child = spawn('ctags', ['--fields=+neZ', '--output-format=json', '--sort=no', '-f', '-', '-L', '-', ...options], { stdio: ['pipe', 'pipe', 'ignore'] })
  child.stdin.end(files.join('\n') + '\n')
  const byFile = new Map()
  for await (const line of createInterface({ input: child.stdout })) {
    const tag = JSON.parse(line)
    if (tag._type !== 'tag' || !kinds.has(tag.kind)) continue
    const list = byFile.get(tag.path) ?? []
    list.push({ name: tag.name, line: tag.line, end: tag.end, scope: tag.scope?.split(/\.|::/).at(-1) })
    byFile.set(tag.path, list)
  }
  const code = await new Promise(resolve => child.once('close', resolve))
  if (code !== 0) throw new Error(`ctags exited ${code}`)
  return byFile
}

/**
 * The TypeScript compiler's definitions of functions and methods in `files`, shaped as the outline's query names
 * them: function declarations and signatures, methods and method signatures (constructors and accessors too),
 * and variables whose value is an arrow function or a function expression. The owner is the nearest enclosing
 * one of those, or the class, interface, enum or namespace.
 */
export function compilerFunctions (files, repo) {
  const ts = createRequire(`${repo}/package.json`)('typescript')
  const byFile = new Map()
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
    const lineOf = (pos) => source.getLineAndCharacterOfPosition(pos).line + 1
    const found = []
    const isFunctionValue = (value) => value !== undefined && (ts.isArrowFunction(value) || ts.isFunctionExpression(value))
    const visit = (node, owner) => {
      let named
      let whole = node
      if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isMethodSignature(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)) && node.name !== undefined) named = node.name
      else if (ts.isConstructorDeclaration(node)) named = node.getChildren(source).find(c => c.kind === ts.SyntaxKind.ConstructorKeyword)
      else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && isFunctionValue(node.initializer)) {
        named = node.name
        // tree-sitter's definition is the whole `const f = …` statement.
        whole = node.parent.parent
      }
      if (named !== undefined) {
        const name = named.getText(source)
        found.push({ name, line: lineOf(named.getStart(source)), end: lineOf(whole.getEnd()), scope: owner })
        ts.forEachChild(node, child => visit(child, name))
        return
      }
      // A top-level constant is a definition of the outline's too (`export const tool = defineTool({ run () {} })`).
      const constant = ts.isVariableStatement(node) && ts.isSourceFile(node.parent) && (node.declarationList.flags & ts.NodeFlags.Const) !== 0 && node.declarationList.declarations.length === 1 && ts.isIdentifier(node.declarationList.declarations[0].name)
      const container = constant && !isFunctionValue(node.declarationList.declarations[0].initializer)
        ? node.declarationList.declarations[0].name.getText(source)
        : (ts.isClassLike(node) || ts.isInterfaceDeclaration(node) || ts.isEnumDeclaration(node) || ts.isModuleDeclaration(node)) && node.name !== undefined ? node.name.getText(source) : owner
      ts.forEachChild(node, child => visit(child, container))
    }
    visit(source, undefined)
    byFile.set(file, found)
  }
  return byFile
}
