/**
 * The seeded product catalog shared by the storefront and the back office: a category tree modelled
 * on WebArena's One Stop Market, a few hundred products with prices, options and stock, and reviews.
 */
import { slugify } from '../../html';
import type { Rng } from '../../random';

export interface Category {
  id: number;
  name: string;
  /** URL path without `.html`: `home-kitchen` or `home-kitchen/furniture`. */
  path: string;
  parentId: number | null;
}

export interface ProductOption {
  label: 'Size' | 'Color';
  values: string[];
}

export interface Product {
  id: number;
  sku: string;
  name: string;
  /** `name-in-slug-form`, the page is `/<urlKey>.html`. */
  urlKey: string;
  categoryId: number;
  brand: string;
  price: number;
  description: string;
  options: ProductOption[];
  qty: number;
  inStock: boolean;
  /** Back-office status: enabled products are sold. */
  enabled: boolean;
  /** Back-office "on sale" flag. */
  onSale: boolean;
}

export interface Review {
  id: number;
  productId: number;
  nickname: string;
  rating: number;
  summary: string;
  text: string;
  /** ISO date. */
  date: string;
  status: 'Approved' | 'Pending';
}

export interface Catalog {
  categories: Category[];
  products: Product[];
  reviews: Review[];
}

interface SubcategorySpec {
  name: string;
  nouns: string[];
  descriptors: string[];
  brands: string[];
  price: [number, number];
  options?: 'apparel' | 'shoes';
}

const TREE: { name: string; subs: SubcategorySpec[] }[] = [
  {
    name: 'Beauty & Personal Care',
    subs: [
      {
        name: 'Skin Care',
        nouns: ['Face Moisturizer', 'Vitamin C Serum', 'Night Cream', 'Eye Cream', 'Facial Cleanser', 'Sunscreen SPF 50'],
        descriptors: ['Hydrating', 'Oil-Free', 'Anti-Aging', 'Fragrance-Free', 'Brightening', 'Gentle'],
        brands: ['Neutrogena', 'CeraVe', 'Olay', 'Cetaphil', 'La Roche-Posay'],
        price: [6, 45],
      },
      {
        name: 'Makeup',
        nouns: ['Liquid Foundation', 'Mascara', 'Eyeshadow Palette', 'Lip Gloss', 'Makeup Brush Set', 'Setting Powder'],
        descriptors: ['Long-Lasting', 'Waterproof', 'Matte', 'Shimmer', 'Vegan', 'Cruelty-Free'],
        brands: ['Maybelline', 'e.l.f.', 'NYX', 'Revlon', 'Sephora Collection'],
        price: [5, 60],
      },
      {
        name: 'Hair Care',
        nouns: ['Shampoo', 'Conditioner', 'Hair Mask', 'Hair Oil', 'Dry Shampoo', 'Curl Cream'],
        descriptors: ['Sulfate-Free', 'Argan Oil', 'Volumizing', 'Repairing', 'Color-Safe', 'Coconut'],
        brands: ['Pantene', 'OGX', 'Dove', 'Garnier', 'Moroccanoil'],
        price: [4, 38],
      },
      {
        name: 'Oral Care',
        nouns: ['Electric Toothbrush', 'Water Flosser', 'Whitening Strips', 'Mouth Guard', 'Toothpaste 3-Pack', 'Tongue Scraper'],
        descriptors: ['Rechargeable', 'Sensitive', 'Travel', 'Fluoride-Free', 'Extra Soft', 'Night'],
        brands: ['Oral-B', 'Colgate', 'Waterpik', 'Crest', 'Philips Sonicare'],
        price: [3, 120],
      },
    ],
  },
  {
    name: 'Home & Kitchen',
    subs: [
      {
        name: 'Furniture',
        nouns: ['Coffee Table', 'Bookshelf', 'Writing Desk', 'TV Stand', 'Accent Chair', 'Nightstand'],
        descriptors: ['Modern', 'Rustic', 'Mid-Century', 'Industrial', 'Farmhouse', 'White'],
        brands: ['Walker Edison', 'Sauder', 'Zinus', 'VASAGLE', 'Nathan James'],
        price: [45, 380],
      },
      {
        name: 'Bedding',
        nouns: ['Comforter Set', 'Sheet Set', 'Duvet Cover', 'Weighted Blanket', 'Pillow 2-Pack', 'Mattress Topper'],
        descriptors: ['Queen', 'King', 'Microfiber', 'Cooling', 'Bamboo', 'Down Alternative'],
        brands: ['Utopia Bedding', 'Bedsure', 'Linenspa', 'Amazon Basics', 'Mellanni'],
        price: [18, 160],
      },
      {
        name: 'Kitchen & Dining',
        nouns: ['Chef Knife', 'Cast Iron Skillet', 'Coffee Maker', 'Blender', 'Cutting Board Set', 'Dinnerware Set'],
        descriptors: ['Stainless Steel', 'Nonstick', 'Programmable', 'Bamboo', 'Ceramic', '12-Cup'],
        brands: ['Lodge', 'Cuisinart', 'Hamilton Beach', 'Ninja', 'OXO'],
        price: [12, 150],
      },
      {
        name: 'Home Decor',
        nouns: ['Taper Candles', 'Wall Mirror', 'Throw Pillow Covers', 'Picture Frame Set', 'Artificial Plant', 'Table Lamp'],
        descriptors: ['Boho', 'Gold', 'Velvet', 'Scented', 'Minimalist', 'Vintage'],
        brands: ['Yankee Candle', 'MIULEE', 'Umbra', 'Mainstays', 'Nearly Natural'],
        price: [9, 90],
      },
    ],
  },
  {
    name: 'Electronics',
    subs: [
      {
        name: 'Headphones',
        nouns: ['Wireless Earbuds', 'Over-Ear Headphones', 'Gaming Headset', 'Noise Cancelling Headphones', 'Sports Earphones', 'Kids Headphones'],
        descriptors: ['Bluetooth 5.3', 'Foldable', 'Hi-Res Audio', 'Sweatproof', 'Wired', '40H Playtime'],
        brands: ['Sony', 'Anker Soundcore', 'JBL', 'Sennheiser', 'Skullcandy'],
        price: [15, 350],
      },
      {
        name: 'Video Games',
        nouns: ['Switch Game Card Case', 'Xbox Controller', 'Charging Dock', 'PS5 Headset Stand', 'Racing Wheel', 'Controller Skin'],
        descriptors: ['Carbon Black', 'Wireless', 'Dual Port', 'RGB', 'Ergonomic', 'Travel'],
        brands: ['PowerA', 'Nintendo', 'Microsoft', 'Logitech G', 'Hori'],
        price: [8, 260],
      },
      {
        name: 'Computer Accessories',
        nouns: ['Wireless Mouse', 'Mechanical Keyboard', 'USB-C Hub', 'Laptop Stand', 'Webcam', 'External SSD'],
        descriptors: ['Ergonomic', 'Backlit', '7-in-1', 'Adjustable', '1080p', 'Portable'],
        brands: ['Logitech', 'Anker', 'Razer', 'Samsung', 'SanDisk'],
        price: [10, 180],
      },
      {
        name: 'Cameras',
        nouns: ['Action Camera', 'Instant Camera', 'Camera Tripod', 'Memory Card', 'Camera Backpack', 'Ring Light'],
        descriptors: ['4K', 'Waterproof', 'Lightweight', '128GB', 'Compact', 'Dimmable'],
        brands: ['GoPro', 'Fujifilm', 'Canon', 'Lexar', 'Neewer'],
        price: [12, 420],
      },
    ],
  },
  {
    name: 'Clothing, Shoes & Jewelry',
    subs: [
      {
        name: "Women's Clothing",
        nouns: ['Racer Tank', 'Yoga Pants', 'Hoodie', 'Maxi Dress', 'Cardigan', 'Running Jacket'],
        descriptors: ['Breathable', 'High-Waist', 'Cotton', 'Lightweight', 'Fleece', 'Relaxed Fit'],
        brands: ['Antonia', 'Aeno', 'Zoe', 'Chloe', 'Ida'],
        price: [18, 85],
        options: 'apparel',
      },
      {
        name: "Men's Clothing",
        nouns: ['Crew Neck Tee', 'Sweatshirt', 'Yoga Short', 'Polo Shirt', 'Windbreaker', 'Chino Pants'],
        descriptors: ['Slim Fit', 'Performance', 'Classic', 'Quick-Dry', 'Heavyweight', 'Organic Cotton'],
        brands: ['Ryker', 'Frankie', 'Hawkeye', 'Cronus', 'Hollister'],
        price: [16, 90],
        options: 'apparel',
      },
      {
        name: 'Shoes',
        nouns: ['Running Shoes', 'Hiking Boots', 'Slip-On Sneakers', 'Sandals', 'Loafers', 'Trail Runners'],
        descriptors: ['Lightweight', 'Waterproof', 'Memory Foam', 'Wide', 'Non-Slip', 'Breathable'],
        brands: ['Nike', 'New Balance', 'Skechers', 'Merrell', 'Crocs'],
        price: [25, 160],
        options: 'shoes',
      },
      {
        name: 'Jewelry',
        nouns: ['Pendant Necklace', 'Hoop Earrings', 'Charm Bracelet', 'Stacking Rings', 'Anklet', 'Stud Earrings'],
        descriptors: ['Sterling Silver', '14K Gold Plated', 'Minimalist', 'Hypoallergenic', 'Pearl', 'Rose Gold'],
        brands: ['PAVOI', 'Pandora', 'Kendra Scott', 'Swarovski', 'Alex and Ani'],
        price: [9, 140],
      },
    ],
  },
  {
    name: 'Grocery & Gourmet Food',
    subs: [
      {
        name: 'Snacks',
        nouns: ['Protein Bars', 'Trail Mix', 'Beef Jerky', 'Popcorn', 'Rice Crackers', 'Dark Chocolate'],
        descriptors: ['Variety Pack', 'Low Sugar', 'Gluten-Free', 'Sea Salt', 'Family Size', 'Organic'],
        brands: ["Kellogg's", 'KIND', 'Planters', "Jack Link's", 'Lindt'],
        price: [4, 40],
      },
      {
        name: 'Beverages',
        nouns: ['Sparkling Water 12-Pack', 'Cold Brew Concentrate', 'Coconut Water', 'Energy Drink', 'Lemonade Mix', 'Kombucha'],
        descriptors: ['Zero Sugar', 'Unsweetened', 'Citrus', 'Original', 'Berry', 'Low Calorie'],
        brands: ['LaCroix', 'Starbucks', 'Vita Coco', 'Celsius', "GT's"],
        price: [3, 35],
      },
      {
        name: 'Pantry Staples',
        nouns: ['Olive Oil', 'Basmati Rice', 'Pasta Sauce', 'Maple Syrup', 'Peanut Butter', 'Meat Substitute Crumbles'],
        descriptors: ['Extra Virgin', 'Organic', 'Family Size', 'Pure', 'Creamy', 'Plant-Based'],
        brands: ['Bertolli', "Rao's", 'Jif', 'Beyond Meat', 'Kirkland'],
        price: [3, 60],
      },
      {
        name: 'Tea & Coffee',
        nouns: ['Green Tea Bags', 'Whole Bean Coffee', 'Fruit Infusion', 'Chai Latte Mix', 'K-Cup Pods', 'Matcha Powder'],
        descriptors: ['Caffeine-Free', 'Dark Roast', 'Orange Vanilla', 'Decaf', 'Ceremonial Grade', '16-Ounce Pouch'],
        brands: ['Elmwood Inn', 'Twinings', 'Lavazza', 'Green Mountain', 'Tazo'],
        price: [5, 48],
      },
    ],
  },
  {
    name: 'Sports & Outdoors',
    subs: [
      {
        name: 'Exercise & Fitness',
        nouns: ['Yoga Mat', 'Resistance Bands', 'Adjustable Dumbbells', 'Jump Rope', 'Foam Roller', 'Kettlebell'],
        descriptors: ['Non-Slip', 'Set of 5', 'Extra Thick', 'Speed', 'High-Density', 'Cast Iron'],
        brands: ['Gaiam', 'Fit Simplify', 'Bowflex', 'Amazon Basics', 'TriggerPoint'],
        price: [8, 300],
      },
      {
        name: 'Camping & Hiking',
        nouns: ['Dome Tent', 'Sleeping Bag', 'Hiking Backpack', 'Camping Lantern', 'Water Filter', 'Trekking Poles'],
        descriptors: ['2-Person', 'Ultralight', '40L', 'Rechargeable', 'Portable', 'Collapsible'],
        brands: ['Coleman', 'Teton Sports', 'Osprey', 'LifeStraw', 'Black Diamond'],
        price: [14, 260],
      },
      {
        name: 'Cycling',
        nouns: ['Bike Helmet', 'Bike Lock', 'Bike Light Set', 'Padded Shorts', 'Water Bottle Cage', 'Bike Pump'],
        descriptors: ['Adult', 'Heavy Duty', 'USB Rechargeable', 'Gel', 'Aluminum', 'Mini'],
        brands: ['Schwinn', 'Kryptonite', 'Bell', 'Topeak', 'CamelBak'],
        price: [7, 110],
      },
    ],
  },
];

const PRODUCTS_PER_SUBCATEGORY = 15;
// No size's label contains another's, so "Select Dropdown Option" (first option containing the text) picks exactly.
const APPAREL_SIZES = ['S', 'M', 'L', 'XL'];
const SHOE_SIZES = ['7', '8', '9', '10', '11', '12'];
const COLORS = ['Black', 'Blue', 'Gray', 'Green', 'Red', 'White', 'Purple', 'Orange'];

export const FIRST_NAMES = [
  'Emma',
  'Liam',
  'Olivia',
  'Noah',
  'Ava',
  'Ethan',
  'Sophia',
  'Mason',
  'Isabella',
  'Lucas',
  'Mia',
  'Logan',
  'Amelia',
  'James',
  'Harper',
  'Benjamin',
  'Evelyn',
  'Elijah',
  'Abigail',
  'Oliver',
  'Emily',
  'Jacob',
  'Ella',
  'Michael',
  'Grace',
  'Daniel',
  'Chloe',
  'Henry',
  'Lily',
  'Jackson',
  'Samantha',
  'Sean',
  'Rachel',
  'Matt',
  'Lisa',
  'Adam',
  'Sarah',
  'Jennifer',
  'Alex',
  'Julia',
];
export const LAST_NAMES = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Garcia',
  'Miller',
  'Davis',
  'Rodriguez',
  'Martinez',
  'Hernandez',
  'Lopez',
  'Gonzalez',
  'Wilson',
  'Anderson',
  'Thomas',
  'Taylor',
  'Moore',
  'Jackson',
  'Martin',
  'Lee',
  'Perez',
  'Thompson',
  'White',
  'Harris',
  'Sanchez',
  'Clark',
  'Lewis',
  'Robinson',
  'Walker',
  'Baker',
  'Chen',
  'Kim',
  'Patel',
  'Nguyen',
];

const REVIEW_SUMMARIES: Record<'good' | 'mixed' | 'bad', string[]> = {
  good: [
    'Love it',
    'Exactly as described',
    'Great value for the money',
    'Would buy again',
    'Five stars',
    'Works perfectly',
    'Better than expected',
    'Highly recommend',
  ],
  mixed: ['It is okay', 'Decent but not great', 'Does the job', 'Some flaws', 'Average quality', 'Mixed feelings'],
  bad: ['Disappointed', 'Broke after a week', 'Not as pictured', 'Waste of money', 'Poor quality', 'Returned it'],
};

const REVIEW_SENTENCES: Record<'good' | 'mixed' | 'bad', string[]> = {
  good: [
    'This is in regular rotation at my house.',
    'Arrived quickly and well packaged.',
    'The quality is excellent for the price.',
    'My whole family uses it every day.',
    'It looks even better in person.',
    'Setup took less than five minutes.',
    'I bought a second one as a gift.',
    'Sturdy and well made.',
  ],
  mixed: [
    'It works, but the instructions were confusing.',
    'The color is a little different from the photos.',
    'Good enough for occasional use.',
    'Shipping took longer than promised.',
    'Smaller than I expected.',
    'It does what it says, nothing more.',
  ],
  bad: [
    'It stopped working after three days.',
    'The material feels cheap.',
    'It arrived damaged and customer service never answered.',
    'Does not fit as described.',
    'The smell was overwhelming.',
    'Parts were missing from the box.',
  ],
};

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/** A price ending in .99, .49 or .00, like real listings. */
function listPrice(rng: Rng, [low, high]: [number, number]): number {
  const whole = rng.int(low, high);
  return round2(whole + rng.pick([0.99, 0.49, 0, 0.99, 0.95]));
}

function isoDate(rng: Rng, from: string, to: string): string {
  const start = Date.parse(from);
  const end = Date.parse(to);
  return new Date(start + Math.floor(rng.next() * (end - start))).toISOString().slice(0, 10);
}

export function generateCatalog(rng: Rng): Catalog {
  const categories: Category[] = [];
  const products: Product[] = [];
  const reviews: Review[] = [];
  const names = new Set<string>();
  const skus = new Set<string>();
  for (const top of TREE) {
    const topCategory: Category = { id: categories.length + 1, name: top.name, path: slugify(top.name), parentId: null };
    categories.push(topCategory);
    for (const sub of top.subs) {
      const category: Category = { id: categories.length + 1, name: sub.name, path: `${topCategory.path}/${slugify(sub.name)}`, parentId: topCategory.id };
      categories.push(category);
      const subRng = rng.fork(category.path);
      let made = 0;
      while (made < PRODUCTS_PER_SUBCATEGORY) {
        const brand = subRng.pick(sub.brands);
        const noun = subRng.pick(sub.nouns);
        const descriptor = subRng.pick(sub.descriptors);
        const color = sub.options ? '' : `, ${subRng.pick(COLORS)}`;
        const name = `${brand} ${descriptor} ${noun}${color}`;
        if (names.has(name)) continue;
        names.add(name);
        let sku: string;
        do sku = `B0${subRng.int(0, 9)}${Array.from({ length: 7 }, () => 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789'[subRng.int(0, 33)]).join('')}`;
        while (skus.has(sku));
        skus.add(sku);
        const options: ProductOption[] =
          sub.options === 'apparel'
            ? [
                { label: 'Size', values: APPAREL_SIZES },
                { label: 'Color', values: subRng.sample(COLORS, 3).sort() },
              ]
            : sub.options === 'shoes'
              ? [
                  { label: 'Size', values: SHOE_SIZES },
                  { label: 'Color', values: subRng.sample(COLORS, 2).sort() },
                ]
              : [];
        const qty = subRng.chance(0.1) ? 0 : subRng.int(3, 250);
        const product: Product = {
          id: products.length + 1,
          sku,
          name,
          urlKey: slugify(name),
          categoryId: category.id,
          brand,
          price: listPrice(subRng, sub.price),
          description: `The ${name} from ${brand}: ${descriptor.toLowerCase()} ${noun.toLowerCase()} made for everyday use. ${subRng.pick(REVIEW_SENTENCES.good)}`,
          options,
          qty,
          inStock: qty > 0,
          enabled: true,
          onSale: false,
        };
        products.push(product);
        made++;
        const reviewCount = subRng.weighted([
          [0, 2],
          [1, 2],
          [2, 3],
          [3, 3],
          [4, 2],
          [5, 2],
          [7, 1],
          [9, 1],
        ] as const);
        for (let r = 0; r < reviewCount; r++) {
          const rating = subRng.weighted([
            [5, 5],
            [4, 4],
            [3, 2],
            [2, 1],
            [1, 1],
          ] as const);
          const mood = rating >= 4 ? 'good' : rating === 3 ? 'mixed' : 'bad';
          reviews.push({
            id: reviews.length + 1,
            productId: product.id,
            nickname: subRng.chance(0.15) ? 'Amazon Customer' : `${subRng.pick(FIRST_NAMES)} ${subRng.pick(LAST_NAMES).slice(0, subRng.chance(0.3) ? 1 : 20)}`,
            rating,
            summary: subRng.pick(REVIEW_SUMMARIES[mood]),
            text: subRng.sample(REVIEW_SENTENCES[mood], 2).join(' '),
            date: isoDate(subRng, '2021-01-01', '2023-05-01'),
            status: subRng.chance(0.08) ? 'Pending' : 'Approved',
          });
        }
      }
    }
  }
  return { categories, products, reviews };
}
