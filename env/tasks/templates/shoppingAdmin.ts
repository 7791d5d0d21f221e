/** Task templates on the shop's back office (`__SHOPPING_ADMIN__`). */
import type { OracleStep } from '../../../browser/contract';
import { monthName } from '../../sites/common';
import { adminOrderNumber, ORDER_STATUS_LABELS, type AdminOrder, type AdminOrderStatus } from '../../sites/shopping-admin/data';
import type { AdminState } from '../../sites/shopping-admin/state';
import type { Product } from '../../sites/shopping/catalog';
import { button, byAttr, byId, click, cycle, DONE, exit, link, programHtml, search, select, stringMatch, type, type TaskTemplate } from '../template';

const HOME = '__SHOPPING_ADMIN__';

function openOrder(o: AdminOrder): OracleStep[] {
  return [click(link('Orders')), search(byId('fulltext'), adminOrderNumber(o.id)), click(byAttr('data-order-id', String(o.id), 'a'))];
}

function openProduct(p: Product): OracleStep[] {
  return [click(link('Products')), search(byId('fulltext'), p.name), click(byAttr('data-product-id', String(p.id), 'a'))];
}

const orderView = (o: AdminOrder) => `${HOME}/sales/order/view/order_id/${o.id}/`;
const productEdit = (p: Product) => `${HOME}/catalog/product/edit/id/${p.id}/`;
/** The value of a product form field (e.g. `product[price]`) on the product's edit page. */
const productField = (p: Product, name: string, value: string) => ({
  url: productEdit(p),
  locator: `document.querySelector('[name="${name}"]').value`,
  required_contents: { exact_match: value },
});

/** `M/D/YY`, the back office's date format. */
function adminDate(iso: string): string {
  const [y, m, d] = iso.split('-').map(Number);
  return `${m}/${d}/${String(y).slice(2)}`;
}

function lastDayOfMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Customers whose full name is unique and whose keyword search finds exactly their orders. */
function searchableCustomers(s: AdminState) {
  const names = s.customers.all().map((c) => `${c.firstName} ${c.lastName}`);
  return s.customers.filter((c) => {
    const name = `${c.firstName} ${c.lastName}`;
    return names.filter((n) => n.toLowerCase().includes(name.toLowerCase())).length === 1;
  });
}

const cancellable = (s: AdminState) => s.orders.filter((o) => o.status === 'pending' || o.status === 'processing');
const COMMENTS = [
  'Customer called to confirm the delivery address.',
  'Gift wrap requested by the customer.',
  'Leave the package at the front desk.',
  'Expedite this order, the customer is traveling.',
  'Customer asked for an invoice copy by email.',
  'Replacement item approved by support.',
];
const PAGE_TITLES = ['Welcome to One Stop Market', 'Our Story', 'Help Center', 'Cookie Settings', 'Page Not Found - Sorry!', 'Customer Care'];

export const SHOPPING_ADMIN_TEMPLATES: TaskTemplate[] = [
  {
    id: 201,
    site: 'shopping_admin',
    intent: 'What are the top-{{n}} best-selling products in {{period}}?',
    drafts: ({ fresh }) => {
      const s = fresh.admin;
      const out = [];
      for (let k = 0; k < 17; k++) {
        const year = 2022 + Math.floor(k / 12);
        const month = (k % 12) + 1;
        const from = `${year}-${String(month).padStart(2, '0')}-01`;
        const to = `${year}-${String(month).padStart(2, '0')}-${lastDayOfMonth(year, month)}`;
        const ranked = s.bestsellers(from, to);
        for (const n of [1, 2, 3]) {
          const top = ranked.slice(0, n);
          const next = ranked[n];
          if (top.length < n || (next && next.qty === top[n - 1]?.qty)) continue;
          out.push({
            params: { n, period: `${monthName(month)} ${year}` },
            startUrl: HOME,
            eval: stringMatch({ must_include: top.map((r) => r.product) }),
            oracle: [
              click(link('Bestsellers')),
              type(byId('sales_report_from'), adminDate(from)),
              type(byId('sales_report_to'), adminDate(to)),
              select(byId('sales_report_period_type'), 'Month'),
              click(button('Show Report')),
              exit(top.map((r) => r.product).join('; ')),
            ],
          });
        }
      }
      return out;
    },
  },
  {
    id: 202,
    site: 'shopping_admin',
    intent: 'What is the email address of our customer {{customer}}?',
    drafts: ({ fresh }) =>
      searchableCustomers(fresh.admin).map((c) => ({
        params: { customer: `${c.firstName} ${c.lastName}` },
        startUrl: HOME,
        eval: stringMatch({ must_include: [c.email] }),
        oracle: [click(link('All Customers')), search(byId('fulltext'), `${c.firstName} ${c.lastName}`), exit(c.email)],
      })),
  },
  {
    id: 203,
    site: 'shopping_admin',
    intent: 'What is the status of order #{{order}}?',
    drafts: ({ fresh }) =>
      fresh.admin.orders.all().map((o) => ({
        params: { order: adminOrderNumber(o.id) },
        startUrl: HOME,
        eval: stringMatch({ must_include: [ORDER_STATUS_LABELS[o.status]] }),
        oracle: [click(link('Orders')), search(byId('fulltext'), adminOrderNumber(o.id)), exit(ORDER_STATUS_LABELS[o.status])],
      })),
  },
  {
    id: 204,
    site: 'shopping_admin',
    intent: 'How many orders has {{customer}} placed?',
    drafts: ({ fresh }) =>
      searchableCustomers(fresh.admin).flatMap((c) => {
        const name = `${c.firstName} ${c.lastName}`;
        const n = fresh.admin.orders.filter((o) => o.customerId === c.id).length;
        if (n === 0 || fresh.admin.searchOrders(name, '').length !== n) return [];
        return [
          {
            params: { customer: name },
            startUrl: HOME,
            eval: stringMatch({ must_include: [String(n)] }),
            oracle: [click(link('Orders')), search(byId('fulltext'), name), exit(String(n))],
          },
        ];
      }),
  },
  {
    id: 205,
    site: 'shopping_admin',
    intent: 'Cancel order #{{order}}',
    drafts: ({ fresh }) =>
      cancellable(fresh.admin).map((o) => ({
        params: { order: adminOrderNumber(o.id) },
        startUrl: HOME,
        eval: programHtml([
          { url: orderView(o), locator: 'document.querySelector("#order_status").outerText', required_contents: { exact_match: 'Canceled' } },
        ]),
        oracle: [...openOrder(o), click(button('Cancel')), exit(DONE)],
      })),
  },
  {
    id: 206,
    site: 'shopping_admin',
    intent: 'Put order #{{order}} on hold',
    heldOut: true,
    drafts: ({ fresh }) =>
      cancellable(fresh.admin).map((o) => ({
        params: { order: adminOrderNumber(o.id) },
        startUrl: HOME,
        eval: programHtml([{ url: orderView(o), locator: 'document.querySelector("#order_status").outerText', required_contents: { exact_match: 'On Hold' } }]),
        oracle: [...openOrder(o), click(button('Hold')), exit(DONE)],
      })),
  },
  {
    id: 207,
    site: 'shopping_admin',
    intent: 'Add the comment "{{comment}}" to order #{{order}}',
    drafts: ({ fresh }) =>
      fresh.admin.orders.all().map((o, i) => {
        const comment = cycle(COMMENTS, i);
        return {
          params: { comment, order: adminOrderNumber(o.id) },
          startUrl: HOME,
          eval: programHtml([
            { url: orderView(o), locator: "document.querySelector('#order_history_block').outerText", required_contents: { must_include: [comment] } },
          ]),
          oracle: [...openOrder(o), type(byId('history_comment'), comment), click(button('Submit Comment')), exit(DONE)],
        };
      }),
  },
  {
    id: 208,
    site: 'shopping_admin',
    intent: 'Change the price of {{product}} to ${{price}}',
    drafts: ({ fresh, rng }) =>
      fresh.admin.products.all().map((p) => {
        const price = Math.max(1, Math.round(p.price + rng.pick([-5, -3, -2, 2, 3, 5, 10]))).toFixed(2);
        return {
          params: { product: p.name, price },
          startUrl: HOME,
          eval: programHtml([productField(p, 'product[price]', price)]),
          oracle: [...openProduct(p), type(byId('product_price'), price), click(button('Save')), exit(DONE)],
        };
      }),
  },
  {
    id: 209,
    site: 'shopping_admin',
    intent: 'Disable {{product}} in the catalog, it has quality issues',
    drafts: ({ fresh }) =>
      fresh.admin.products
        .filter((p) => p.enabled)
        .map((p) => ({
          params: { product: p.name },
          startUrl: HOME,
          eval: programHtml([productField(p, 'product[status]', '2')]),
          oracle: [...openProduct(p), select(byId('product_status'), 'Disabled'), click(button('Save')), exit(DONE)],
        })),
  },
  {
    id: 210,
    site: 'shopping_admin',
    intent: 'We received a delivery: set the quantity of {{product}} to {{qty}} and mark it as in stock',
    drafts: ({ fresh, rng }) =>
      fresh.admin.products.all().map((p) => {
        const qty = String(rng.int(5, 300));
        return {
          params: { product: p.name, qty },
          startUrl: HOME,
          eval: programHtml([
            productField(p, 'product[quantity_and_stock_status][qty]', qty),
            productField(p, 'product[quantity_and_stock_status][is_in_stock]', '1'),
          ]),
          oracle: [...openProduct(p), type(byId('product_qty'), qty), select(byId('product_stock'), 'In Stock'), click(button('Save')), exit(DONE)],
        };
      }),
  },
  {
    id: 211,
    site: 'shopping_admin',
    intent: 'Create a {{report}} report for orders from {{from}} to {{to}}',
    drafts: ({ rng }) =>
      Array.from({ length: 40 }, (_, i) => {
        const kind = i % 2 === 0 ? 'sales' : 'shipping';
        const start = Date.parse('2022-01-01') + rng.int(0, 420) * 86_400_000;
        const from = new Date(start).toISOString().slice(0, 10);
        const to = new Date(start + rng.int(7, 120) * 86_400_000).toISOString().slice(0, 10);
        return {
          params: { report: kind === 'sales' ? 'sales' : 'shipping', from: adminDate(from), to: adminDate(to) },
          startUrl: HOME,
          eval: {
            ...programHtml(
              [
                { url: 'last', locator: 'document.querySelector(\'[id="sales_report_from"]\').value', required_contents: { exact_match: adminDate(from) } },
                { url: 'last', locator: 'document.querySelector(\'[id="sales_report_to"]\').value', required_contents: { exact_match: adminDate(to) } },
              ],
              // The submitted filter is in the URL, so typing the dates without showing the report fails.
              `${HOME}/reports/report_sales/${kind}/?${new URLSearchParams({ period_type: 'day', from: adminDate(from), to: adminDate(to) }).toString()}`,
            ),
          },
          oracle: [
            click(byAttr('href', `/admin/reports/report_sales/${kind}/`, 'a')),
            type(byId('sales_report_from'), adminDate(from)),
            type(byId('sales_report_to'), adminDate(to)),
            click(button('Show Report')),
            exit(DONE),
          ],
        };
      }),
  },
  {
    id: 212,
    site: 'shopping_admin',
    intent: 'Show me all orders with the status {{status}}',
    heldOut: true,
    drafts: () =>
      (Object.entries(ORDER_STATUS_LABELS) as [AdminOrderStatus, string][]).map(([, label]) => ({
        params: { status: label },
        startUrl: HOME,
        eval: programHtml(
          [{ url: 'last', locator: 'document.querySelector("div.admin__data-grid-filters-current").outerText', required_contents: { must_include: [label] } }],
          `${HOME}/sales/order/`,
        ),
        oracle: [click(link('Orders')), select(byId('order-status'), label), click(button('Apply Filters')), exit(DONE)],
      })),
  },
  {
    id: 213,
    site: 'shopping_admin',
    intent: 'Approve the pending review "{{summary}}" by {{nickname}}',
    drafts: ({ fresh }) => {
      const s = fresh.admin;
      const pending = s.reviews.filter((r) => r.status === 'Pending').sort((a, b) => b.date.localeCompare(a.date) || b.id - a.id);
      return pending
        .filter((r) => pending.filter((x) => x.summary === r.summary && x.nickname === r.nickname).length === 1)
        .map((r) => ({
          params: { summary: r.summary, nickname: r.nickname },
          startUrl: HOME,
          eval: programHtml([
            {
              url: `${HOME}/review/product/edit/id/${r.id}/`,
              locator: "document.querySelector('#status').value",
              required_contents: { exact_match: 'Approved' },
            },
          ]),
          oracle: [
            click(link('Pending Reviews')),
            search(byId('fulltext'), `${r.nickname} ${r.summary}`),
            click(byAttr('data-review-id', String(r.id), 'a')),
            select(byId('status'), 'Approved'),
            click(button('Save Review')),
            exit(DONE),
          ],
        }));
    },
  },
  {
    id: 214,
    site: 'shopping_admin',
    intent: 'Change the title of the "{{page}}" page to "{{title}}"',
    heldOut: true,
    drafts: ({ fresh }) =>
      fresh.admin.pages.all().flatMap((p) =>
        PAGE_TITLES.filter((t) => t !== p.title)
          .slice(0, 2)
          .map((title) => ({
            params: { page: p.title, title },
            startUrl: HOME,
            eval: programHtml([
              {
                url: `${HOME}/cms/page/edit/page_id/${p.id}/`,
                locator: 'document.querySelector(\'input[name="title"]\').value',
                required_contents: { exact_match: title },
              },
            ]),
            oracle: [
              click(link('Pages')),
              click(byAttr('data-page-id', String(p.id), 'a')),
              type(byId('cms_page_title'), title),
              click(button('Save')),
              exit(DONE),
            ],
          })),
      ),
  },
];
