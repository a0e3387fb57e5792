import t from 'tap'
import { Type } from '@sinclair/typebox'
import { Inject } from '../../src/tool-api/define-tool.js'
import { compareText, formatCall, paginate, pagingFooter, withoutDefaults } from '../../src/tool-kit/paging.js'

t.test('paginate slices a sorted array and reports where the page sits', async (t) => {
  const items = Array.from({ length: 7 }, (_, i) => i)

  t.same(paginate(items, 0, 3), { items: [0, 1, 2], pagination: { offset: 0, page_size: 3, returned: 3, total: 7, total_is_lower_bound: false, has_more: true, next_offset: 3 } })
  t.match(paginate(items, 6, 3), { items: [6], pagination: { has_more: false, next_offset: -1 } })
  t.match(paginate(items, 50, 3, true), { items: [], pagination: { returned: 0, total_is_lower_bound: true, has_more: false } })
})

t.test('the footer names the exact next call, or none', async (t) => {
  const items = Array.from({ length: 250 }, (_, i) => i)

  t.equal(pagingFooter('find_files', paginate(items, 100, 100).pagination, { patterns: ['*.ts'], path: 'src', sort: undefined }),
    'Results 101–200 of 250 | next: find_files patterns=["*.ts"] path="src" offset=200')
  t.equal(pagingFooter('list_directory', paginate(items, 200, 100, true).pagination, { path: '.' }, 'Entries'), 'Entries 201–250 of 250+ | next: none')
  t.equal(formatCall('read_files', { files: [{ path: 'a.ts', start_line: 5 }] }), 'read_files files=[{"path":"a.ts","start_line":5}]')
})

t.test('compareText is locale-independent code-unit order', async (t) => {
  t.same(['b', 'B', 'a', '-x', 'é', 'Z'].sort(compareText), ['-x', 'B', 'Z', 'a', 'b', 'é'])
})

t.test('withoutDefaults keeps what the caller chose: no defaults, no undefined, never an injected service', async (t) => {
  const schema = Type.Object({
    path: Type.Optional(Type.String({ default: '.' })),
    page_size: Type.Optional(Type.Integer({ default: 20 })),
    tags: Type.Optional(Type.Array(Type.String(), { default: ['a'] })),
    workspace: Inject('workspace')
  })
  t.same(withoutDefaults({ path: 'src', page_size: 20, tags: ['a'], offset: undefined, workspace: {} }, schema), { path: 'src' })
  t.same(withoutDefaults({ path: '.', tags: ['b'], extra: 1 }, schema), { tags: ['b'], extra: 1 })
})
