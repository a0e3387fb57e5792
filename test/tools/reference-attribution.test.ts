import { isDeepStrictEqual } from 'node:util'
import t from 'tap'
import fc from 'fast-check'
import { runs } from '../helpers/property.js'
import { attribute, attributor, importReaches } from '../../src/tool-kit/reference-attribution.js'

t.test('an include or import reaches the file it names, by the importing file\'s language', async (t) => {
  // C and C++: a sibling first, then the end of any path (include folders are not known).
  t.ok(importReaches('internal.h', '/r/mm/slub.c', '/r/mm/internal.h'))
  t.ok(importReaches('linux/slab.h', '/r/mm/slub.c', '/r/include/linux/slab.h'))
  t.notOk(importReaches('linux/slab.h', '/r/mm/slub.c', '/r/tools/include/slab.h'))
  t.notOk(importReaches('', '/r/mm/slub.c', '/r/mm/slub.h'), 'an empty include names nothing')
  t.ok(importReaches('../lib/x.hpp', '/r/src/a.cpp', '/r/lib/x.hpp'))
  // JavaScript and TypeScript: relative specifiers, the .js of a .ts, a folder's index; a package reaches nothing here.
  t.ok(importReaches('./upload.js', '/r/src/app.ts', '/r/src/upload.ts'))
  t.ok(importReaches('../services/code-index', '/r/src/tools/a.ts', '/r/src/services/code-index/index.ts'))
  t.notOk(importReaches('pino', '/r/src/app.ts', '/r/src/pino.ts'))
  t.notOk(importReaches('./other.js', '/r/src/app.ts', '/r/src/upload.ts'))
  // Python: dotted modules, absolute or relative, and packages.
  t.ok(importReaches('.queue', '/r/app/tasks.py', '/r/app/queue.py'))
  t.ok(importReaches('..core', '/r/app/sub/tasks.py', '/r/app/core/__init__.py'))
  t.ok(importReaches('app.store', '/r/x/main.py', '/r/app/store.py'))
  t.ok(importReaches('app', '/r/x/main.pyi', '/r/app/__init__.py'))
  t.notOk(importReaches('.', '/r/app/tasks.py', '/r/app/queue.py'))
  // Go: the package folder.
  t.ok(importReaches('example.com/app/store', '/r/cmd/main.go', '/r/store/db.go'))
  t.notOk(importReaches('fmt', '/r/cmd/main.go', '/r/store/db.go'))
  t.notOk(importReaches('', '/r/cmd/main.go', '/r/store/db.go'))
  // Rust: the module a `use` path names, its `mod.rs` too; `mod x;` a sibling.
  t.ok(importReaches('crate::store::{Store, open as open_store}', '/r/src/cache.rs', '/r/src/store.rs'))
  t.ok(importReaches('crate::store::Store', '/r/src/cache.rs', '/r/src/store/mod.rs'))
  t.ok(importReaches('helpers', '/r/src/lib.rs', '/r/src/helpers.rs'))
  t.notOk(importReaches('std::collections::HashMap', '/r/src/cache.rs', '/r/src/store.rs'))
  // Java: the class's file, or every file of a package.
  t.ok(importReaches('app.store.Ledger', '/r/src/app/Billing.java', '/r/src/app/store/Ledger.java'))
  t.ok(importReaches('app.store.*', '/r/src/app/Billing.java', '/r/src/app/store/Ledger.java'))
  t.notOk(importReaches('app.store.Other', '/r/src/app/Billing.java', '/r/src/app/store/Ledger.java'))
})

t.test('a file\'s references mean the definition in it, else in its package folder, else those it imports, else any', async (t) => {
  const defs = [{ path: '/r/a/one.ts' }, { path: '/r/b/two.ts' }]
  t.same(attribute('/r/a/one.ts', [], defs), { meant: [0], via: 'same-file' })
  t.same(attribute('/r/c/use.ts', ['../b/two.js'], defs), { meant: [1], via: 'import' })
  t.same(attribute('/r/c/use.ts', ['../a/one.js', '../b/two.js'], defs), { meant: [0, 1], via: 'import' })
  t.same(attribute('/r/c/use.ts', ['./elsewhere.js'], defs), { meant: [0, 1], via: 'name' })
  const go = [{ path: '/r/store/db.go' }, { path: '/r/cache/db.go' }]
  t.same(attribute('/r/store/open.go', [], go), { meant: [0], via: 'import' }, 'Go: its own package')
  t.same(attribute('/r/cmd/main.go', ['example.com/x/cache'], go), { meant: [1], via: 'import' })
})

t.test('one attributor over many files answers each as attribute alone would: what it keeps per folder changes nothing', async (t) => {
  // Files and definitions drawn from a few folders, names and languages, so that folders, specifiers and
  // definitions repeat: the cases the attributor's per-(language, folder, specifier) memory is there for.
  const folder = fc.constantFrom('/r', '/r/mm', '/r/include/linux', '/r/app', '/r/app/sub', '/r/store')
  const stem = fc.constantFrom('slab', 'one', 'two', 'store', '__init__', 'index', 'mod')
  const ext = fc.constantFrom('.c', '.h', '.ts', '.js', '.py', '.go', '.rs', '.java')
  const file = fc.tuple(folder, stem, ext).map(([f, s, e]) => `${f}/${s}${e}`)
  const spec = fc.constantFrom('linux/slab.h', 'slab.h', './two.js', '../one.js', '.store', 'app.store', 'example.com/x/store', 'crate::store::Store', 'app.store.*', '../mm/slab.h', '')
  t.doesNotThrow(() => fc.assert(fc.property(fc.array(fc.record({ path: file }), { minLength: 2, maxLength: 4 }), fc.array(fc.tuple(file, fc.array(spec, { maxLength: 4 })), { minLength: 1, maxLength: 30 }), (defs, files) => {
    const tie = attributor(defs)
    return files.every(([path, imports]) => isDeepStrictEqual(tie(path, imports), attribute(path, imports, defs)))
  }), runs(300)))
})
