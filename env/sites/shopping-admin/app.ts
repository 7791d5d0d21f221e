/**
 * The shop's back office (modelled on WebArena's Magento admin, under `/admin`): order grid with
 * filters and order actions (cancel, hold, comments), product grid and edit form, customers,
 * reviews moderation, CMS pages and sales / shipping / bestseller reports over date ranges.
 */
import { html, type Html } from '../../html';
import { intParam, notFound, pageNumber, redirect, Router, type RequestContext } from '../../http/router';
import type { SiteApp } from '../../http/siteServer';
import { longDate, money, paginate, shortDate, withQuery } from '../common';
import { ADMIN_REST, addRestRoutes, type ShopAdminCredentials } from '../shopping/rest';
import { adminOrderNumber, adminOrderTotal, ORDER_STATUS_LABELS, type AdminOrder, type AdminOrderStatus } from './data';
import { AdminState, parseAdminDate, type AdminBase } from './state';

type Ctx = RequestContext<AdminState>;

const STYLE = `body{font-family:Arial,sans-serif;margin:0;display:flex;color:#303030}
.admin__menu{width:200px;background:#373330;color:#fff;min-height:100vh;flex:none;padding:8px 0}.admin__menu a{color:#f7f3eb;text-decoration:none}
.admin__menu .level-0>strong{display:block;padding:8px 14px;color:#aaa6a0;font-size:12px;text-transform:uppercase}.admin__menu ul{list-style:none;margin:0;padding:0}
.admin__menu li li{padding:3px 22px;font-size:14px}.page-wrapper{flex:1;min-width:0}.page-header{display:flex;justify-content:space-between;padding:10px 24px;border-bottom:1px solid #ddd}
.page-content{padding:16px 24px}table{border-collapse:collapse;width:100%}th,td{border:1px solid #e3e3e3;padding:6px 8px;font-size:13px;text-align:left}
th{background:#514943;color:#fff}.message{background:#e5efe5;padding:8px 24px;color:#006400}.field{margin:6px 0}label{display:inline-block;min-width:160px}
td a{display:inline-block}.admin__data-grid-header{display:flex;gap:12px;align-items:center;margin-bottom:8px;flex-wrap:wrap}.pager{list-style:none;display:flex;gap:8px;padding:0}`;

const MENU: [string, [string, string][]][] = [
  ['Dashboard', [['/admin/dashboard/', 'Dashboard']]],
  ['Sales', [['/sales/order/', 'Orders']]],
  ['Catalog', [['/catalog/product/', 'Products']]],
  ['Customers', [['/customer/index/', 'All Customers']]],
  [
    'Marketing',
    [
      ['/review/product/', 'All Reviews'],
      ['/review/product/pending/', 'Pending Reviews'],
    ],
  ],
  ['Content', [['/cms/page/', 'Pages']]],
  [
    'Reports',
    [
      ['/reports/report_sales/sales/', 'Orders'],
      ['/reports/report_sales/shipping/', 'Shipping'],
      ['/reports/report_sales/bestsellers/', 'Bestsellers'],
    ],
  ],
];

function layout(ctx: Ctx, title: string, main: Html): Html {
  const flash = ctx.state.takeFlash();
  return html`<!DOCTYPE html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>${title} / Magento Admin</title>
        <style>
          ${STYLE}
        </style>
      </head>
      <body>
        <nav class="admin__menu" id="menu-magento-backend">
          <a class="logo" href="${ctx.base}/admin/dashboard/" title="Magento Admin Panel"><strong>Magento Admin</strong></a>
          <ul>
            ${MENU.map(
              ([section, links]) =>
                html`<li class="level-0">
                  <strong>${section}</strong>
                  <ul>
                    ${links.map(([href, label]) => html`<li><a href="${ctx.base}${href}">${label}</a></li>`)}
                  </ul>
                </li>`,
            )}
          </ul>
        </nav>
        <div class="page-wrapper">
          <header class="page-header">
            <h1 class="page-title">${title}</h1>
            <div class="admin-user"><span class="admin__action-dropdown-text">admin</span> <a href="${ctx.base}/admin/auth/logout/">Sign Out</a></div>
          </header>
          ${flash ? html`<div class="message message-success success" data-ui-id="messages-message-success">${flash}</div>` : ''}
          <main class="page-content" id="anchor-content">${main}</main>
          <footer class="page-footer"><p>Copyright © 2023 Magento Commerce Inc. All rights reserved. Magento ver. 2.4.6</p></footer>
        </div>
      </body>
    </html>`;
}

function pager(ctx: Ctx, path: string, page: number, pages: number, total: number): Html {
  return html`<div class="admin__data-grid-pager">
    <span class="records-found">${total} records found</span>
    <ul class="pager">
      ${page > 1 ? html`<li><a class="action-previous" href="${withQuery(ctx.base + path, ctx.query, { page: String(page - 1) })}">Previous Page</a></li>` : ''}
      <li>Page ${page} of ${pages}</li>
      ${page < pages ? html`<li><a class="action-next" href="${withQuery(ctx.base + path, ctx.query, { page: String(page + 1) })}">Next Page</a></li>` : ''}
    </ul>
  </div>`;
}

function statusLabel(status: AdminOrderStatus): string {
  return ORDER_STATUS_LABELS[status];
}

function dashboard(ctx: Ctx): Html {
  const s = ctx.state;
  const last = s.searchOrders('', '').slice(0, 5);
  const lifetime = s.orders.filter((o) => o.status !== 'canceled').reduce((sum, o) => sum + adminOrderTotal(o), 0);
  return layout(
    ctx,
    'Dashboard',
    html`<div class="dashboard-totals"><span>Lifetime Sales</span> <strong>${money(lifetime)}</strong></div>
      <section class="dashboard-item">
        <h2>Last Orders</h2>
        <table>
          <thead>
            <tr>
              <th>Customer</th>
              <th>Items</th>
              <th>Total</th>
            </tr>
          </thead>
          <tbody>
            ${last.map(
              (o) =>
                html`<tr>
                  <td>${s.customerName(o.customerId)}</td>
                  <td>${o.lines.length}</td>
                  <td>${money(adminOrderTotal(o))}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </section>`,
  );
}

function ordersGrid(ctx: Ctx): Html {
  const s = ctx.state;
  const search = ctx.query.get('search') ?? '';
  const status = ctx.query.get('status') ?? '';
  const orders = s.searchOrders(search, status);
  const { items, pages, page } = paginate(orders, pageNumber(ctx.query, 'page'), 20);
  const filters = [search ? `Keyword: ${search}` : '', status ? `Status: ${statusLabel(status as AdminOrderStatus)}` : ''].filter(Boolean);
  return layout(
    ctx,
    'Orders',
    html`<form class="admin__data-grid-header" method="get" action="${ctx.base}/sales/order/">
        <input type="text" name="search" id="fulltext" class="admin__control-text data-grid-search-control" placeholder="Search by keyword" value="${search}" />
        <label for="order-status">Status</label
        ><select name="status" id="order-status">
          <option value="">Any Status</option>
          ${(Object.keys(ORDER_STATUS_LABELS) as AdminOrderStatus[]).map((k) => html`<option value="${k}" ${k === status ? 'selected' : ''}>${statusLabel(k)}</option>`)}
        </select>
        <button type="submit" class="action-secondary" title="Apply Filters">Apply Filters</button>
      </form>
      ${filters.length ? html`<div class="admin__data-grid-filters-current _show"><strong>Active filters:</strong> ${filters.map((f) => html`<span class="admin__current-filters-list">${f}</span> `)}<a href="${ctx.base}/sales/order/">Clear all</a></div>` : ''}
      ${pager(ctx, '/sales/order/', page, pages, orders.length)}
      <table class="data-grid">
        <thead>
          <tr>
            <th>ID</th>
            <th>Purchase Date</th>
            <th>Bill-to Name</th>
            <th>Grand Total (Purchased)</th>
            <th>Status</th>
            <th>Action</th>
          </tr>
        </thead>
        <tbody>
          ${items.map(
            (o) =>
              html`<tr>
                <td>${adminOrderNumber(o.id)}</td>
                <td>${longDate(o.date)}</td>
                <td>${s.customerName(o.customerId)}</td>
                <td>${money(adminOrderTotal(o))}</td>
                <td>${statusLabel(o.status)}</td>
                <td><a class="action-menu-item" href="${ctx.base}/sales/order/view/order_id/${o.id}/" data-order-id="${o.id}">View</a></td>
              </tr>`,
          )}
        </tbody>
      </table>`,
  );
}

function orderView(ctx: Ctx): Html {
  const s = ctx.state;
  const o = s.orders.get(intParam(ctx.params, 'id')) ?? notFound('order');
  const customer = s.customers.get(o.customerId);
  const can = (action: string) => {
    if (action === 'cancel') return o.status === 'pending' || o.status === 'processing';
    if (action === 'hold') return o.status === 'pending' || o.status === 'processing';
    return o.status === 'holded';
  };
  const button = (action: string, label: string) =>
    can(action)
      ? html`<form class="order-action" method="post" action="${ctx.base}/sales/order/${action}/order_id/${o.id}/">
          <button type="submit" id="order-view-${action}-button" title="${label}">${label}</button>
        </form>`
      : '';
  // The notes column sits beside the order details, so the comment box is in view on arrival.
  return layout(
    ctx,
    `# ${adminOrderNumber(o.id)}`,
    html`<div class="page-actions">
        ${button('cancel', 'Cancel')} ${button('hold', 'Hold')} ${button('unhold', 'Unhold')} <a href="${ctx.base}/sales/order/">Back</a>
      </div>
      <div class="order-view" style="display:flex;gap:24px">
        <div class="order-view-main" style="flex:1">
          <section class="order-view-account-information">
            <h2>Order &amp; Account Information</h2>
            <table class="order-information-table">
              <tbody>
                <tr>
                  <th>Order Date</th>
                  <td>${longDate(o.date)}</td>
                </tr>
                <tr>
                  <th>Order Status</th>
                  <td><span id="order_status">${statusLabel(o.status)}</span></td>
                </tr>
                <tr>
                  <th>Customer Name</th>
                  <td>${customer ? html`<a href="${ctx.base}/customer/index/edit/id/${customer.id}/">${customer.firstName} ${customer.lastName}</a>` : ''}</td>
                </tr>
                <tr>
                  <th>Email</th>
                  <td>${customer?.email ?? ''}</td>
                </tr>
              </tbody>
            </table>
          </section>
          <section class="order-addresses">
            <h2>Address Information</h2>
            <address class="admin__page-section-item-content order-shipping-address">
              ${customer ? html`${customer.firstName} ${customer.lastName}<br />${customer.street}<br />${customer.city}, ${customer.state}, ${customer.zip}<br />United States<br />T: ${customer.phone}` : ''}
            </address>
          </section>
          <section class="order-items">
            <h2>Items Ordered</h2>
            <table class="edit-order-table">
              <thead>
                <tr>
                  <th>Product</th>
                  <th>SKU</th>
                  <th>Price</th>
                  <th>Qty</th>
                  <th>Row Total</th>
                </tr>
              </thead>
              <tbody>
                ${o.lines.map(
                  (l) =>
                    html`<tr>
                      <td>${l.name}</td>
                      <td>${l.sku}</td>
                      <td>${money(l.price)}</td>
                      <td>Ordered ${l.qty}</td>
                      <td>${money(l.price * l.qty)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
            <table class="order-totals">
              <tr>
                <td>Shipping &amp; Handling</td>
                <td>${money(o.shipping)}</td>
              </tr>
              <tr>
                <td><strong>Grand Total</strong></td>
                <td><strong>${money(adminOrderTotal(o))}</strong></td>
              </tr>
            </table>
          </section>
        </div>
        <section id="order_history_block" class="order-history" style="width:360px">
          <h2>Notes for this Order</h2>
          <form method="post" action="${ctx.base}/sales/order/addComment/order_id/${o.id}/">
            <label for="history_comment">Comment</label><textarea name="history[comment]" id="history_comment" rows="3" cols="60"></textarea>
            <button type="submit" id="submit_comment" title="Submit Comment">Submit Comment</button>
          </form>
          <ul class="note-list">
            ${[...o.comments].reverse().map(
              (c) =>
                html`<li class="note-list-item">
                  <span class="note-list-date">${longDate(c.date)}</span> <span class="note-list-status">${statusLabel(c.status)}</span>
                  <div class="note-list-comment">${c.text}</div>
                </li>`,
            )}
          </ul>
        </section>
      </div>`,
  );
}

function orderAction(ctx: Ctx, change: (o: AdminOrder) => AdminOrder | undefined, done: string) {
  const s = ctx.state;
  const id = intParam(ctx.params, 'id');
  const order = s.orders.get(id) ?? notFound('order');
  const next = change(order);
  if (next) {
    s.orders.set(id, next);
    s.flash = done;
  } else s.flash = 'This action is not available for the order in its current status.';
  return redirect(`${ctx.base}/sales/order/view/order_id/${id}/`);
}

function withStatus(ctx: Ctx, o: AdminOrder, status: AdminOrderStatus, note: string): AdminOrder {
  return { ...o, status, comments: [...o.comments, { date: ctx.state.clock.now(), text: note, status }] };
}

function productsGrid(ctx: Ctx): Html {
  const s = ctx.state;
  const search = ctx.query.get('search') ?? '';
  const products = search ? s.searchProducts(search) : s.products.all();
  const { items, pages, page } = paginate(products, pageNumber(ctx.query, 'page'), 20);
  return layout(
    ctx,
    'Products',
    html`<form class="admin__data-grid-header" method="get" action="${ctx.base}/catalog/product/">
        <input type="text" name="search" id="fulltext" placeholder="Search by keyword" value="${search}" /> <button type="submit" title="Search">Search</button>
      </form>
      ${pager(ctx, '/catalog/product/', page, pages, products.length)}
      <table class="data-grid">
        <thead>
          <tr>
            <th>ID</th>
            <th>Name</th>
            <th>SKU</th>
            <th>Price</th>
            <th>Quantity</th>
            <th>Salable</th>
            <th>Status</th>
            <th>Action</th>
          </tr>
        </thead>
        <tbody>
          ${items.map(
            (p) =>
              html`<tr>
                <td>${p.id}</td>
                <td>${p.name}</td>
                <td>${p.sku}</td>
                <td>${money(p.price)}</td>
                <td>${p.qty}</td>
                <td>${p.inStock ? 'In Stock' : 'Out of Stock'}</td>
                <td>${p.enabled ? 'Enabled' : 'Disabled'}</td>
                <td><a class="action-menu-item" href="${ctx.base}/catalog/product/edit/id/${p.id}/" data-product-id="${p.id}">Edit</a></td>
              </tr>`,
          )}
        </tbody>
      </table>`,
  );
}

function productEdit(ctx: Ctx): Html {
  const p = ctx.state.products.get(intParam(ctx.params, 'id')) ?? notFound('product');
  return layout(
    ctx,
    p.name,
    html`<form method="post" action="${ctx.base}/catalog/product/save/id/${p.id}/" id="product_form">
      <div class="page-actions"><a href="${ctx.base}/catalog/product/">Back</a> <button type="submit" id="save" title="Save">Save</button></div>
      <fieldset class="admin__fieldset">
        <div class="field">
          <label for="product_status">Enable Product</label
          ><select name="product[status]" id="product_status">
            <option value="1" ${p.enabled ? 'selected' : ''}>Enabled</option>
            <option value="2" ${p.enabled ? '' : 'selected'}>Disabled</option>
          </select>
        </div>
        <div class="field">
          <label for="product_name">Product Name</label><input type="text" name="product[name]" id="product_name" value="${p.name}" size="80" />
        </div>
        <div class="field"><label for="product_sku">SKU</label><input type="text" name="product[sku]" id="product_sku" value="${p.sku}" /></div>
        <div class="field">
          <label for="product_price">Price</label><input type="text" name="product[price]" id="product_price" value="${p.price.toFixed(2)}" />
        </div>
        <div class="field">
          <label for="product_qty">Quantity</label><input type="text" name="product[quantity_and_stock_status][qty]" id="product_qty" value="${p.qty}" />
        </div>
        <div class="field">
          <label for="product_stock">Stock Status</label
          ><select name="product[quantity_and_stock_status][is_in_stock]" id="product_stock">
            <option value="1" ${p.inStock ? 'selected' : ''}>In Stock</option>
            <option value="0" ${p.inStock ? '' : 'selected'}>Out of Stock</option>
          </select>
        </div>
        <div class="field">
          <label for="product_sale">On Sale</label
          ><select name="product[sale]" id="product_sale">
            <option value="0" ${p.onSale ? '' : 'selected'}>No</option>
            <option value="1" ${p.onSale ? 'selected' : ''}>Yes</option>
          </select>
        </div>
        <div class="field">
          <label for="product_description">Description</label
          ><textarea name="product[description]" id="product_description" rows="4" cols="80">${p.description}</textarea>
        </div>
      </fieldset>
    </form>`,
  );
}

function saveProduct(ctx: Ctx) {
  const s = ctx.state;
  const id = intParam(ctx.params, 'id');
  const f = ctx.form;
  const price = Number(f.get('product[price]'));
  const qty = Number(f.get('product[quantity_and_stock_status][qty]'));
  const saved = s.products.update(id, (p) => ({
    ...p,
    enabled: f.get('product[status]') !== '2',
    name: (f.get('product[name]') ?? p.name).trim() || p.name,
    sku: (f.get('product[sku]') ?? p.sku).trim() || p.sku,
    price: Number.isFinite(price) && price >= 0 ? Math.round(price * 100) / 100 : p.price,
    qty: Number.isInteger(qty) && qty >= 0 ? qty : p.qty,
    inStock: f.get('product[quantity_and_stock_status][is_in_stock]') === '1',
    onSale: f.get('product[sale]') === '1',
    description: f.get('product[description]') ?? p.description,
  }));
  if (!saved) notFound('product');
  s.flash = 'You saved the product.';
  return redirect(`${ctx.base}/catalog/product/edit/id/${id}/`);
}

function customersGrid(ctx: Ctx): Html {
  const s = ctx.state;
  const search = ctx.query.get('search') ?? '';
  const customers = search ? s.searchCustomers(search) : s.customers.all();
  const { items, pages, page } = paginate(customers, pageNumber(ctx.query, 'page'), 20);
  return layout(
    ctx,
    'Customers',
    html`<form class="admin__data-grid-header" method="get" action="${ctx.base}/customer/index/">
        <input type="text" name="search" id="fulltext" placeholder="Search by keyword" value="${search}" /> <button type="submit" title="Search">Search</button>
      </form>
      ${pager(ctx, '/customer/index/', page, pages, customers.length)}
      <table class="data-grid">
        <thead>
          <tr>
            <th>ID</th>
            <th>Name</th>
            <th>Email</th>
            <th>Group</th>
            <th>Phone</th>
            <th>ZIP</th>
            <th>State/Province</th>
            <th>Customer Since</th>
            <th>Action</th>
          </tr>
        </thead>
        <tbody>
          ${items.map(
            (c) =>
              html`<tr>
                <td>${c.id}</td>
                <td>${c.firstName} ${c.lastName}</td>
                <td>${c.email}</td>
                <td>${c.group}</td>
                <td>${c.phone}</td>
                <td>${c.zip}</td>
                <td>${c.state}</td>
                <td>${longDate(c.since)}</td>
                <td><a href="${ctx.base}/customer/index/edit/id/${c.id}/" data-customer-id="${c.id}">Edit</a></td>
              </tr>`,
          )}
        </tbody>
      </table>`,
  );
}

function customerView(ctx: Ctx): Html {
  const s = ctx.state;
  const c = s.customers.get(intParam(ctx.params, 'id')) ?? notFound('customer');
  const orders = s.orders.filter((o) => o.customerId === c.id).sort((a, b) => b.date.localeCompare(a.date));
  return layout(
    ctx,
    `${c.firstName} ${c.lastName}`,
    html`<section class="customer-information">
        <h2>Personal Information</h2>
        <table>
          <tbody>
            <tr>
              <th>Email</th>
              <td>${c.email}</td>
            </tr>
            <tr>
              <th>Customer Group</th>
              <td>${c.group}</td>
            </tr>
            <tr>
              <th>Customer Since</th>
              <td>${longDate(c.since)}</td>
            </tr>
            <tr>
              <th>Default Billing Address</th>
              <td>
                <address>${c.street}<br />${c.city}, ${c.state}, ${c.zip}<br />United States<br />T: ${c.phone}</address>
              </td>
            </tr>
          </tbody>
        </table>
      </section>
      <section class="customer-orders">
        <h2>Orders (${orders.length})</h2>
        <table>
          <thead>
            <tr>
              <th>Order</th>
              <th>Purchased</th>
              <th>Order Total</th>
              <th>Status</th>
            </tr>
          </thead>
          <tbody>
            ${orders.map(
              (o) =>
                html`<tr>
                  <td><a href="${ctx.base}/sales/order/view/order_id/${o.id}/">${adminOrderNumber(o.id)}</a></td>
                  <td>${longDate(o.date)}</td>
                  <td>${money(adminOrderTotal(o))}</td>
                  <td>${statusLabel(o.status)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </section>`,
  );
}

function reviewsGrid(ctx: Ctx, pendingOnly: boolean): Html {
  const s = ctx.state;
  const words = (ctx.query.get('search') ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  const reviews = s.reviews
    .filter((r) => (!pendingOnly || r.status === 'Pending') && words.every((w) => `${r.nickname} ${r.summary} ${r.text}`.toLowerCase().includes(w)))
    .sort((a, b) => b.date.localeCompare(a.date) || b.id - a.id);
  const { items, pages, page } = paginate(reviews, pageNumber(ctx.query, 'page'), 20);
  const path = pendingOnly ? '/review/product/pending/' : '/review/product/';
  return layout(
    ctx,
    pendingOnly ? 'Pending Reviews' : 'Reviews',
    html`<form class="admin__data-grid-header" method="get" action="${ctx.base}${path}">
        <input type="text" name="search" id="fulltext" placeholder="Search by keyword" value="${ctx.query.get('search') ?? ''}" />
        <button type="submit" title="Search">Search</button>
      </form>
      ${pager(ctx, path, page, pages, reviews.length)}
      <table class="data-grid">
        <thead>
          <tr>
            <th>ID</th>
            <th>Created</th>
            <th>Status</th>
            <th>Title</th>
            <th>Nickname</th>
            <th>Review</th>
            <th>Product</th>
            <th>Action</th>
          </tr>
        </thead>
        <tbody>
          ${items.map(
            (r) =>
              html`<tr>
                <td>${r.id}</td>
                <td>${shortDate(r.date)}</td>
                <td>${r.status}</td>
                <td>${r.summary}</td>
                <td>${r.nickname}</td>
                <td>${r.text}</td>
                <td>${s.products.get(r.productId)?.name ?? ''}</td>
                <td><a href="${ctx.base}/review/product/edit/id/${r.id}/" data-review-id="${r.id}">Edit</a></td>
              </tr>`,
          )}
        </tbody>
      </table>`,
  );
}

function reviewEdit(ctx: Ctx): Html {
  const s = ctx.state;
  const r = s.reviews.get(intParam(ctx.params, 'id')) ?? notFound('review');
  return layout(
    ctx,
    'Edit Review',
    html`<form method="post" action="${ctx.base}/review/product/save/id/${r.id}/">
      <div class="field"><label>Product</label><span>${s.products.get(r.productId)?.name ?? ''}</span></div>
      <div class="field"><label>Author</label><span>${r.nickname}</span></div>
      <div class="field">
        <label for="status">Status</label
        ><select name="status_id" id="status">
          ${['Approved', 'Pending', 'Not Approved'].map((st) => html`<option value="${st}" ${st === r.status ? 'selected' : ''}>${st}</option>`)}
        </select>
      </div>
      <div class="field"><label for="title">Summary of Review</label><input type="text" name="title" id="title" value="${r.summary}" /></div>
      <div class="field"><label for="detail">Review</label><textarea name="detail" id="detail" rows="3">${r.text}</textarea></div>
      <button type="submit" id="save_button" title="Save Review">Save Review</button>
    </form>`,
  );
}

type ReportKind = 'sales' | 'shipping' | 'bestsellers';
const REPORT_TITLES: Record<ReportKind, string> = { sales: 'Orders Report', shipping: 'Shipping Report', bestsellers: 'Bestsellers Report' };

/** Report rows grouped by period; the form keeps what was typed, as Magento's filter does. */
function reportPage(ctx: Ctx, kind: ReportKind): Html {
  const s = ctx.state;
  const fromText = ctx.query.get('from') ?? '';
  const toText = ctx.query.get('to') ?? '';
  const period = ctx.query.get('period_type') ?? 'day';
  const from = parseAdminDate(fromText);
  const to = parseAdminDate(toText);
  const periodKey = (iso: string) => (period === 'year' ? iso.slice(0, 4) : period === 'month' ? iso.slice(0, 7) : iso.slice(0, 10));
  let table: Html = html`<p class="empty-text">
    ${ctx.query.has('from') ? 'Please specify valid dates in the From and To fields.' : 'Choose a date range and press Show Report.'}
  </p>`;
  if (from && to) {
    const orders = s.ordersBetween(from, to).filter((o) => o.status !== 'canceled');
    const groups = new Map<string, AdminOrder[]>();
    for (const o of orders.sort((a, b) => a.date.localeCompare(b.date))) groups.set(periodKey(o.date), [...(groups.get(periodKey(o.date)) ?? []), o]);
    if (kind === 'bestsellers') {
      const rows = [...groups.keys()].flatMap((key) => {
        const [start, end] = key.length === 4 ? [`${key}-01-01`, `${key}-12-31`] : key.length === 7 ? [`${key}-01`, `${key}-31`] : [key, key];
        return s
          .bestsellers(start < from ? from : start, end > to ? to : end)
          .slice(0, 5)
          .map((r) => ({ key, ...r }));
      });
      table = html`<table class="data-grid" id="gridBestsellers">
        <thead>
          <tr>
            <th>Interval</th>
            <th>Product</th>
            <th>Price</th>
            <th>Order Quantity</th>
          </tr>
        </thead>
        <tbody>
          ${rows.map(
            (r) =>
              html`<tr>
                <td>${r.key}</td>
                <td>${r.product}</td>
                <td>${money(r.price)}</td>
                <td>${r.qty}</td>
              </tr>`,
          )}
        </tbody>
      </table>`;
    } else {
      table = html`<table class="data-grid" id="gridReport">
        <thead>
          <tr>
            <th>Interval</th>
            <th>Orders</th>
            <th>${kind === 'sales' ? 'Sales Items' : 'Carrier/Method'}</th>
            <th>${kind === 'sales' ? 'Sales Total' : 'Total Shipping'}</th>
          </tr>
        </thead>
        <tbody>
          ${[...groups].map(
            ([key, list]) =>
              html`<tr>
                <td>${key}</td>
                <td>${list.length}</td>
                <td>${kind === 'sales' ? list.reduce((n, o) => n + o.lines.reduce((m, l) => m + l.qty, 0), 0) : 'Flat Rate - Fixed'}</td>
                <td>${money(list.reduce((sum, o) => sum + (kind === 'sales' ? adminOrderTotal(o) : o.shipping), 0))}</td>
              </tr>`,
          )}
        </tbody>
        <tfoot>
          <tr>
            <th>Total</th>
            <th>${orders.length}</th>
            <th></th>
            <th>${money(orders.reduce((sum, o) => sum + (kind === 'sales' ? adminOrderTotal(o) : o.shipping), 0))}</th>
          </tr>
        </tfoot>
      </table>`;
    }
  }
  return layout(
    ctx,
    REPORT_TITLES[kind],
    html`<form method="get" action="${ctx.base}/reports/report_sales/${kind}/" id="report_form">
        <fieldset class="fieldset-wrapper">
          <legend>Filter</legend>
          <div class="field">
            <label for="sales_report_period_type">Period</label
            ><select name="period_type" id="sales_report_period_type">
              ${['day', 'month', 'year'].map((p) => html`<option value="${p}" ${p === period ? 'selected' : ''}>${p[0]!.toUpperCase() + p.slice(1)}</option>`)}
            </select>
          </div>
          <div class="field">
            <label for="sales_report_from">From</label><input type="text" name="from" id="sales_report_from" value="${fromText}" placeholder="M/D/YY" />
          </div>
          <div class="field">
            <label for="sales_report_to">To</label><input type="text" name="to" id="sales_report_to" value="${toText}" placeholder="M/D/YY" />
          </div>
        </fieldset>
        <button type="submit" id="filter_form_submit" title="Show Report">Show Report</button>
      </form>
      ${table}`,
  );
}

function cmsGrid(ctx: Ctx): Html {
  return layout(
    ctx,
    'Pages',
    html`<table class="data-grid">
      <thead>
        <tr>
          <th>ID</th>
          <th>Title</th>
          <th>URL Key</th>
          <th>Status</th>
          <th>Action</th>
        </tr>
      </thead>
      <tbody>
        ${ctx.state.pages.all().map(
          (p) =>
            html`<tr>
              <td>${p.id}</td>
              <td>${p.title}</td>
              <td>${p.urlKey}</td>
              <td>${p.active ? 'Enabled' : 'Disabled'}</td>
              <td><a href="${ctx.base}/cms/page/edit/page_id/${p.id}/" data-page-id="${p.id}">Edit</a></td>
            </tr>`,
        )}
      </tbody>
    </table>`,
  );
}

function cmsEdit(ctx: Ctx): Html {
  const p = ctx.state.pages.get(intParam(ctx.params, 'id')) ?? notFound('page');
  return layout(
    ctx,
    p.title,
    html`<form method="post" action="${ctx.base}/cms/page/save/page_id/${p.id}/">
      <div class="field"><label for="cms_page_title">Page Title</label><input type="text" name="title" id="cms_page_title" value="${p.title}" /></div>
      <div class="field">
        <label for="cms_page_status">Enable Page</label
        ><select name="is_active" id="cms_page_status">
          <option value="1" ${p.active ? 'selected' : ''}>Enabled</option>
          <option value="0" ${p.active ? '' : 'selected'}>Disabled</option>
        </select>
      </div>
      <div class="field"><label for="cms_page_url">URL Key</label><input type="text" name="identifier" id="cms_page_url" value="${p.urlKey}" /></div>
      <button type="submit" id="save" title="Save">Save</button>
    </form>`,
  );
}

/** `restAdmin`: the account the REST token endpoint accepts (default the seeded one). */
export function createAdminApp(base: AdminBase, restAdmin?: ShopAdminCredentials): SiteApp<AdminState> {
  const router = addRestRoutes(new Router<AdminState>(), ADMIN_REST, restAdmin)
    .get('/', (ctx) => redirect(`${ctx.base}/admin/dashboard/`))
    .get('/admin/dashboard', dashboard)
    .get('/dashboard', dashboard)
    .get('/admin/auth/logout', (ctx) => layout(ctx, 'Sign Out', html`<p>Signing out is disabled in this back office.</p>`))
    .get('/sales/order', ordersGrid)
    .get('/sales/order/view/order_id/:id', orderView)
    .post('/sales/order/cancel/order_id/:id', (ctx) =>
      orderAction(
        ctx,
        (o) => (o.status === 'pending' || o.status === 'processing' ? withStatus(ctx, o, 'canceled', 'Order canceled.') : undefined),
        'You canceled the order.',
      ),
    )
    .post('/sales/order/hold/order_id/:id', (ctx) =>
      orderAction(
        ctx,
        (o) => (o.status === 'pending' || o.status === 'processing' ? withStatus(ctx, o, 'holded', 'Order put on hold.') : undefined),
        'You put the order on hold.',
      ),
    )
    .post('/sales/order/unhold/order_id/:id', (ctx) =>
      orderAction(
        ctx,
        (o) => (o.status === 'holded' ? withStatus(ctx, o, 'processing', 'Order released from hold.') : undefined),
        'You released the order from holding status.',
      ),
    )
    .post('/sales/order/addComment/order_id/:id', (ctx) => {
      const text = (ctx.form.get('history[comment]') ?? '').trim();
      return orderAction(
        ctx,
        (o) => (text ? { ...o, comments: [...o.comments, { date: ctx.state.clock.now(), text, status: o.status }] } : undefined),
        'You added a comment to the order.',
      );
    })
    .get('/catalog/product', productsGrid)
    .get('/catalog/product/edit/id/:id', productEdit)
    .post('/catalog/product/save/id/:id', saveProduct)
    .get('/customer/index', customersGrid)
    .get('/customer/index/edit/id/:id', customerView)
    .get('/review/product', (ctx) => reviewsGrid(ctx, false))
    .get('/review/product/pending', (ctx) => reviewsGrid(ctx, true))
    .get('/review/product/edit/id/:id', reviewEdit)
    .post('/review/product/save/id/:id', (ctx) => {
      const status = ctx.form.get('status_id');
      const id = intParam(ctx.params, 'id');
      const saved = ctx.state.reviews.update(id, (r) => ({
        ...r,
        status: status === 'Approved' || status === 'Pending' ? status : r.status,
        summary: ctx.form.get('title') ?? r.summary,
        text: ctx.form.get('detail') ?? r.text,
      }));
      if (!saved) notFound('review');
      if (status === 'Not Approved') ctx.state.reviews.delete(id);
      ctx.state.flash = 'You saved the review.';
      return redirect(`${ctx.base}/review/product/edit/id/${id}/`);
    })
    .get('/cms/page', cmsGrid)
    .get('/cms/page/edit/page_id/:id', cmsEdit)
    .post('/cms/page/save/page_id/:id', (ctx) => {
      const id = intParam(ctx.params, 'id');
      const saved = ctx.state.pages.update(id, (p) => ({
        ...p,
        title: (ctx.form.get('title') ?? '').trim() || p.title,
        active: ctx.form.get('is_active') !== '0',
        urlKey: ctx.form.get('identifier') ?? p.urlKey,
      }));
      if (!saved) notFound('page');
      ctx.state.flash = 'You saved the page.';
      return redirect(`${ctx.base}/cms/page/edit/page_id/${id}/`);
    })
    .get('/reports/report_sales/sales', (ctx) => reportPage(ctx, 'sales'))
    .get('/reports/report_sales/shipping', (ctx) => reportPage(ctx, 'shipping'))
    .get('/reports/report_sales/bestsellers', (ctx) => reportPage(ctx, 'bestsellers'));
  return {
    name: 'shopping_admin',
    basePath: '/admin',
    rootPaths: ['/rest'],
    freshState: () => new AdminState(base),
    router,
    errorPage: (state, status, message) =>
      html`<!DOCTYPE html>
        <html>
          <head>
            <title>Error ${status}</title>
          </head>
          <body>
            <h1>Error ${status}</h1>
            <p>${message}</p>
            <p><a href="/admin/admin/dashboard/">Go to the dashboard</a></p>
          </body>
        </html>`,
  };
}
