"""Full-scale NGQA build benchmark: raw NHANES tree + an FNDDS-sized food set -> all questions.

    python benchmarks/ngqa_build.py [--tree DIR] [--foods 7000] [--fractions 0.1,0.25,0.5,1.0]
        [--seed 0] [--cores 2] [--profile] [--tree-seed 0] [--participants 100000]
        [--food-records 2000000]

1. Makes sure a synthetic raw NHANES tree exists (``nhanes_scale.py``'s writer and marker: a
   tree in ``--tree`` whose marker matches is reused, else written there; without ``--tree`` a
   temporary tree is written and removed at the end). Writing is timed on its own and is not
   part of the target.
2. For each fraction, in a fresh subprocess pinned to ``--cores`` CPUs (so peak memory and the
   timings are its own): ``read_nhanes_dir(prefer="P")`` and ``annotate_users`` on the whole
   tree, a synthetic FNDDS-sized food set (``--foods`` foods, ``FoodTables``), then
   ``build_benchmark`` on the first ``fraction`` of a seeded permutation of the annotated users
   (nested: the 10 % users are inside the 25 % users, ...), writing into a temporary directory.
   The build's steps are timed by wrapping the functions ``build_benchmark`` calls
   (``user_profiles``, ``question_foods``, ``make_questions``, ``statistics``,
   ``graph_tables``, ``_write``) in the ``nutrireason.ngqa.build`` namespace; nothing in the
   package is changed.
3. Prints per fraction: users, users with requirements, questions per level, seconds per
   stage, peak RSS (VmHWM), and the growth of the NGQA build step against the smallest
   fraction; for the largest fraction, the ratios to the targets (60 s, 4 GB on 2 cores).
   Total = read + annotate + NGQA build. Making the synthetic foods (it stands in for reading
   FNDDS) is shown but not counted. Not a pass/fail test.

Synthetic foods: ``source`` "fndds", ids ``fndds:<8-digit code>``, about half in the NGQA
universe (WWEIA mixed dishes 3002-3802, breads 4202-4208 / 4402-4404, sweet bakery 5502-5506,
desserts 5802-5806) and half outside (1002-2806 and a few fruit / vegetable / beverage
categories). Descriptions combine dish words per group ("Chicken curry with rice, home
recipe"); some differ only by words the keyword de-duplication ignores, so it has work to do.
Nutrients per 100 g are drawn per group to resemble FNDDS (mixed dishes: about 50-450 kcal,
sodium 50-900 mg, ...); 2-10 ingredients per food from a pool of SR-style ingredients
(``sr:<number>``) with a few nested FNDDS foods (``fndds:<code>``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import nhanes_scale  # noqa: E402  (the tree writer and marker live there)

ROOT = HERE.parent
TARGET_SECONDS = nhanes_scale.TARGET_SECONDS
TARGET_GB = nhanes_scale.TARGET_GB
LEVELS = ("sparse", "standard", "complex")
BUILD_STEPS = ("user_profiles", "question_foods", "make_questions", "statistics",
               "graph_tables", "_write")

# ------------------------------------------------------------------------------ synthetic foods

# WWEIA categories per group: (code, description).
CATEGORIES = {
    "mixed": [
        (3002, "Meat mixed dishes"), (3004, "Poultry mixed dishes"),
        (3006, "Seafood mixed dishes"), (3102, "Bean, pea, legume dishes"),
        (3104, "Vegetable dishes"), (3202, "Rice mixed dishes"),
        (3204, "Pasta mixed dishes, excludes macaroni and cheese"),
        (3206, "Macaroni and cheese"), (3208, "Turnovers and other grain-based items"),
        (3402, "Fried rice and lo/chow mein"), (3404, "Stir-fry and soy-based sauce mixtures"),
        (3502, "Egg rolls, dumplings, sushi"), (3504, "Nachos"), (3506, "Burritos and tacos"),
        (3602, "Pizza"), (3702, "Burgers (single code)"), (3703, "Frankfurter sandwiches"),
        (3704, "Chicken/turkey sandwiches (single code)"),
        (3706, "Egg/breakfast sandwiches (single code)"),
        (3708, "Other sandwiches (single code)"), (3720, "Cheese sandwiches (single code)"),
        (3722, "Peanut butter and jelly sandwiches (single code)"),
        (3730, "Seafood sandwiches (single code)"), (3802, "Soups"),
    ],
    "bread": [
        (4202, "Yeast breads"), (4204, "Rolls and buns"), (4206, "Bagels and English muffins"),
        (4208, "Tortillas"), (4402, "Biscuits, muffins, quick breads"),
        (4404, "Pancakes, waffles, French toast"),
    ],
    "sweet": [
        (5502, "Cakes and pies"), (5504, "Cookies and brownies"),
        (5506, "Doughnuts, sweet rolls, pastries"),
    ],
    "dessert": [
        (5802, "Ice cream and frozen dairy desserts"), (5804, "Pudding"),
        (5806, "Gelatins, ices, sorbets"),
    ],
    "other": [
        (1002, "Milk, whole"), (1004, "Milk, reduced fat"), (1202, "Flavored milk, whole"),
        (1402, "Milk shakes and other dairy drinks"), (1602, "Cheese"), (1820, "Yogurt, regular"),
        (2002, "Beef, excludes ground"), (2004, "Ground beef"), (2006, "Pork"),
        (2008, "Lamb, goat, game"), (2010, "Liver and organ meats"),
        (2202, "Chicken, whole pieces"), (2204, "Chicken patties, nuggets and tenders"),
        (2206, "Turkey, duck, other poultry"), (2402, "Fish"), (2404, "Shellfish"),
        (2502, "Eggs and omelets"), (2602, "Cold cuts and cured meats"), (2604, "Bacon"),
        (2606, "Frankfurters"), (2608, "Sausages"), (2802, "Beans, peas, legumes"),
        (2804, "Nuts and seeds"), (2806, "Processed soy products"), (6002, "Apples"),
        (6402, "Tomatoes"), (6404, "Carrots"), (6410, "Other red and orange vegetables"),
        (6802, "Potatoes, white"), (7002, "Citrus juice"), (7202, "Diet soft drinks"),
    ],
}
# Share of all foods per group: about half inside the NGQA universe.
GROUP_SHARE = {"mixed": 0.33, "bread": 0.07, "sweet": 0.07, "dessert": 0.03, "other": 0.50}
# 8-digit FNDDS food code ranges per group.
CODE_RANGE = {"mixed": (27_000_000, 28_999_999), "bread": (51_000_000, 52_999_999),
              "sweet": (53_000_000, 53_999_999), "dessert": (13_000_000, 13_999_999),
              "other": (11_000_000, 26_999_999)}

WORDS = {
    "mixed": (
        ["chicken", "beef", "pork", "turkey", "shrimp", "fish", "tofu", "bean", "lentil", "egg",
         "vegetable", "cheese", "ham", "sausage", "lamb", "crab", "tuna", "salmon", "chickpea",
         "mushroom", "spinach", "potato", "meatball", "clam"],
        ["curry", "stew", "casserole", "stir fry", "soup", "salad", "sandwich", "burrito",
         "taco", "enchilada", "lasagna", "pot pie", "pasta", "noodles", "fried rice", "pizza",
         "wrap", "quesadilla", "chili", "dumplings", "gumbo", "hash", "teriyaki", "fajita"],
        ["rice", "noodles", "vegetables", "potatoes", "gravy", "tomato sauce", "cream sauce",
         "beans", "corn", "peppers", "onions", "broccoli", "carrots", "mushrooms", "spinach",
         "peas", "cheese sauce", "barbecue sauce"],
        ["", "", "", "NFS", "from restaurant", "home recipe", "frozen meal", "from fast food",
         "reduced sodium", "made with oil", "made with butter", "made with margarine",
         "with added fat", "lean"],
    ),
    "bread": (
        ["white", "whole wheat", "rye", "multigrain", "oat", "corn", "flour", "sourdough",
         "cinnamon raisin", "blueberry", "banana", "pumpkin", "buttermilk", "garlic", "onion",
         "potato", "honey wheat", "cheese", "zucchini", "cranberry"],
        ["bread", "roll", "bun", "bagel", "English muffin", "tortilla", "biscuit", "muffin",
         "cornbread", "pancake", "waffle", "French toast", "scone", "pita", "naan", "croissant"],
        ["butter", "syrup", "jam", "margarine", "cream cheese", "honey", "peanut butter", "",
         "", ""],
        ["", "", "NFS", "toasted", "from fast food", "frozen", "home recipe", "gluten free",
         "reduced calorie", "made from mix"],
    ),
    "sweet": (
        ["chocolate", "vanilla", "apple", "cherry", "lemon", "pecan", "pumpkin", "peanut butter",
         "oatmeal raisin", "coconut", "carrot", "strawberry", "blueberry", "cinnamon", "marble",
         "red velvet", "banana", "peach", "sweet potato", "almond"],
        ["cake", "pie", "cookie", "brownie", "doughnut", "sweet roll", "pastry", "danish",
         "cupcake", "cheesecake", "cobbler", "turnover", "strudel", "coffee cake", "eclair"],
        ["icing", "frosting", "nuts", "cream filling", "fruit filling", "chocolate chips",
         "glaze", "", "", ""],
        ["", "", "NFS", "from bakery", "commercially prepared", "home recipe", "reduced sugar",
         "low fat", "made from mix", "frozen"],
    ),
    "dessert": (
        ["chocolate", "vanilla", "strawberry", "lemon", "mango", "coffee", "mint", "caramel",
         "cherry", "coconut", "raspberry", "pistachio", "butter pecan", "cookies and cream"],
        ["ice cream", "frozen yogurt", "pudding", "gelatin", "sorbet", "sherbet", "ice pop",
         "custard", "mousse", "parfait", "ice cream sandwich", "ice cream cone", "flan"],
        ["whipped cream", "fruit", "nuts", "sprinkles", "syrup", "", ""],
        ["", "", "NFS", "sugar free", "light", "low fat", "fat free", "made with milk"],
    ),
    "other": (
        ["milk", "cheddar cheese", "yogurt", "beef steak", "ground beef", "pork chop", "lamb",
         "beef liver", "chicken breast", "chicken nuggets", "turkey", "cod", "shrimp", "egg",
         "bologna", "bacon", "frankfurter", "pork sausage", "black beans", "peanuts", "almonds",
         "tofu", "apple", "tomato", "carrots", "sweet potato", "orange juice", "cola"],
        ["raw", "baked", "broiled", "fried", "grilled", "roasted", "boiled", "steamed",
         "breaded", "smoked", "stewed", "canned", "dried", "fresh", "scrambled"],
        ["", "", "", "skin eaten", "lean only", "with salt", "no salt added", "whole",
         "sliced", "chopped"],
        ["", "", "NFS", "from restaurant", "from fast food", "reduced fat", "fat free",
         "diet", "low sodium", "organic"],
    ),
}

# Nutrients per 100 g per group: (median, lognormal sigma, low clip, high clip).
NUTRIENT_DRAWS = {
    "mixed": {"calories": (140, 0.5, 20, 450), "carbohydrates": (14, 0.7, 0, 60),
              "protein": (8, 0.55, 0.3, 30), "saturated_fat": (2.5, 0.8, 0, 15),
              "cholesterol": (22, 1.0, 0, 150), "sodium": (330, 0.55, 50, 900),
              "fiber": (1.5, 0.6, 0, 8), "potassium": (200, 0.4, 20, 700),
              "phosphorus": (110, 0.45, 10, 400), "iron": (1.1, 0.5, 0.1, 6),
              "calcium": (45, 0.8, 3, 400), "folic_acid": (20, 0.8, 0, 150),
              "vitamin_c": (2.5, 1.2, 0, 40), "vitamin_d": (0.1, 1.0, 0, 3),
              "vitamin_b12": (0.35, 1.0, 0, 4)},
    "bread": {"calories": (280, 0.2, 150, 450), "carbohydrates": (46, 0.15, 25, 70),
              "protein": (8.5, 0.2, 3, 15), "saturated_fat": (1.5, 0.8, 0.1, 10),
              "cholesterol": (3, 1.5, 0, 120), "sodium": (470, 0.3, 100, 900),
              "fiber": (2.8, 0.5, 0.5, 10), "potassium": (140, 0.4, 40, 400),
              "phosphorus": (120, 0.4, 30, 400), "iron": (3.0, 0.35, 0.5, 7),
              "calcium": (110, 0.5, 10, 350), "folic_acid": (90, 0.5, 10, 300),
              "vitamin_c": (0.2, 1.5, 0, 10), "vitamin_d": (0.05, 1.5, 0, 2),
              "vitamin_b12": (0.05, 1.5, 0, 1)},
    "sweet": {"calories": (410, 0.15, 200, 550), "carbohydrates": (56, 0.15, 25, 80),
              "protein": (5, 0.35, 1, 12), "saturated_fat": (6, 0.5, 0.5, 20),
              "cholesterol": (35, 0.9, 0, 150), "sodium": (310, 0.4, 30, 700),
              "fiber": (1.6, 0.6, 0, 8), "potassium": (120, 0.5, 20, 500),
              "phosphorus": (100, 0.5, 20, 350), "iron": (1.8, 0.5, 0.2, 6),
              "calcium": (45, 0.7, 5, 250), "folic_acid": (40, 0.7, 2, 200),
              "vitamin_c": (0.5, 1.5, 0, 20), "vitamin_d": (0.2, 1.2, 0, 2),
              "vitamin_b12": (0.1, 1.2, 0, 1.5)},
    "dessert": {"calories": (180, 0.35, 20, 350), "carbohydrates": (25, 0.35, 3, 50),
                "protein": (3, 0.5, 0, 8), "saturated_fat": (4.5, 0.7, 0, 15),
                "cholesterol": (25, 1.0, 0, 120), "sodium": (75, 0.5, 10, 300),
                "fiber": (0.4, 1.0, 0, 4), "potassium": (170, 0.4, 10, 400),
                "phosphorus": (100, 0.4, 5, 250), "iron": (0.3, 0.8, 0, 2),
                "calcium": (110, 0.5, 2, 250), "folic_acid": (5, 0.8, 0, 30),
                "vitamin_c": (0.6, 1.5, 0, 30), "vitamin_d": (0.2, 1.0, 0, 2),
                "vitamin_b12": (0.3, 0.8, 0, 1.5)},
    "other": {"calories": (150, 0.8, 1, 650), "carbohydrates": (6, 1.3, 0, 80),
              "protein": (12, 0.9, 0, 40), "saturated_fat": (2, 1.2, 0, 20),
              "cholesterol": (40, 1.4, 0, 400), "sodium": (150, 1.0, 0, 1500),
              "fiber": (0.8, 1.3, 0, 15), "potassium": (250, 0.6, 5, 1000),
              "phosphorus": (170, 0.7, 2, 600), "iron": (1.0, 0.8, 0, 10),
              "calcium": (40, 1.2, 1, 800), "folic_acid": (12, 1.0, 0, 200),
              "vitamin_c": (1.0, 1.8, 0, 60), "vitamin_d": (0.2, 1.5, 0, 10),
              "vitamin_b12": (0.6, 1.3, 0, 20)},
}
SUGAR_SHARE = {"mixed": (1.5, 8), "bread": (1.5, 12), "sweet": (5, 4), "dessert": (8, 2),
               "other": (1, 4)}  # sugar = carbohydrates * Beta(a, b)
INGREDIENT_BASES = [
    "Chicken, broilers or fryers", "Beef, ground", "Pork, fresh", "Turkey, whole",
    "Fish, cod, Atlantic", "Crustaceans, shrimp", "Tofu, firm", "Beans, black, mature seeds",
    "Lentils, mature seeds", "Egg, whole", "Cheese, cheddar", "Milk, whole", "Butter, salted",
    "Oil, soybean", "Oil, olive", "Margarine, regular", "Wheat flour, white, all-purpose",
    "Wheat flour, whole-grain", "Rice, white, long-grain", "Rice, brown, long-grain",
    "Pasta, dry, enriched", "Noodles, egg", "Potatoes, flesh and skin", "Tomatoes, red, ripe",
    "Onions", "Peppers, sweet, green", "Carrots", "Broccoli", "Spinach", "Corn, sweet, yellow",
    "Peas, green", "Mushrooms, white", "Garlic", "Celery", "Cabbage", "Sugars, granulated",
    "Syrups, corn", "Cocoa, dry powder", "Chocolate, dark", "Vanilla extract", "Salt, table",
    "Leavening agents, baking powder", "Yeast, baker's, active dry", "Cream, fluid, heavy",
    "Sour cream", "Cream cheese", "Apples, raw, with skin", "Bananas", "Strawberries",
    "Blueberries", "Lemon juice", "Nuts, pecans", "Nuts, almonds", "Peanut butter, smooth",
    "Soy sauce", "Catsup", "Mayonnaise", "Gravy, brown", "Tomato products, canned, sauce",
    "Water, tap",
]
INGREDIENT_FORMS = ["raw", "cooked", "boiled", "roasted", "fried", "canned", "frozen",
                    "dried", "unenriched", "enriched", "with salt", "without salt",
                    "drained solids", "chopped", "whole", "meat only", "meat and skin",
                    "light meat", "dark meat", "regular", "reduced fat", "all varieties",
                    "commercial", "prepared", "unprepared"]


def _draw(rng, spec, n: int) -> np.ndarray:
    median, sigma, low, high = spec
    return np.clip(median * np.exp(sigma * rng.standard_normal(n)), low, high)


def _descriptions(rng, group: str, n: int, taken: set[str]) -> list[str]:
    first, second, third, qualifier = WORDS[group]
    out: list[str] = []
    while len(out) < n:
        a, b = first[rng.integers(len(first))], second[rng.integers(len(second))]
        c, q = third[rng.integers(len(third))], qualifier[rng.integers(len(qualifier))]
        if group == "other":
            text = f"{a}, {b}" + (f", {c}" if c else "")
        elif group == "mixed":
            text = f"{a} {b} with {c}"
        else:
            text = f"{a} {b}" + (f" with {c}" if c else "")
        text = text + (f", {q}" if q else "")
        text = text[0].upper() + text[1:]
        if text not in taken:
            taken.add(text)
            out.append(text)
    return out


def make_food_tables(n_foods: int, seed: int):
    """A synthetic FNDDS-sized ``FoodTables`` (foods and their ingredients)."""
    from nutrireason.recipes.foods import FOOD_COLUMNS, INGREDIENT_COLUMNS, FoodTables
    from nutrireason.sources.nutrients import NUTRIENT_NAMES

    rng = np.random.default_rng(seed + 7919)
    counts = nhanes_scale._split(n_foods, {g: int(s * 1000) for g, s in GROUP_SHARE.items()})
    taken: set[str] = set()
    frames = []
    for group, n in counts.items():
        if n == 0:
            continue
        cats = CATEGORIES[group]
        weights = 1.0 / np.arange(1, len(cats) + 1) ** 0.6
        pick = rng.choice(len(cats), n, p=weights / weights.sum())
        low, high = CODE_RANGE[group]
        codes = rng.choice(np.arange(low, high, 7), n, replace=False)
        frame = {"food_id": [f"fndds:{c}" for c in codes],
                 "description": _descriptions(rng, group, n, taken),
                 "category": [cats[i][1] for i in pick],
                 "category_code": [cats[i][0] for i in pick], "source": "fndds"}
        for name, spec in NUTRIENT_DRAWS[group].items():
            frame[name] = np.round(_draw(rng, spec, n), 2)
        a, b = SUGAR_SHARE[group]
        frame["sugar"] = np.round(frame["carbohydrates"] * rng.beta(a, b, n), 2)
        # Some foods with no vitamin C or D at all, as in FNDDS.
        for name in ("vitamin_c", "vitamin_d"):
            frame[name][rng.random(n) < 0.3] = 0.0
        frames.append(pd.DataFrame(frame))
    foods = pd.concat(frames, ignore_index=True)
    missing = set(NUTRIENT_NAMES) - set(foods.columns)
    if missing:
        raise SystemExit(f"synthetic foods lack nutrients {sorted(missing)}")
    foods = foods[FOOD_COLUMNS].sort_values("food_id").reset_index(drop=True)

    # Ingredients: 2-10 per food, an SR-style pool with Zipf popularity, a few nested foods.
    pool_desc = [f"{base}, {form}" for base in INGREDIENT_BASES for form in INGREDIENT_FORMS]
    pool_code = [f"sr:{c}" for c in rng.choice(np.arange(1001, 99_999), len(pool_desc),
                                                  replace=False)]
    popularity = 1.0 / np.arange(1, len(pool_desc) + 1) ** 0.9
    popularity = rng.permutation(popularity / popularity.sum())
    per_food = rng.integers(2, 11, len(foods))
    food_index = np.repeat(np.arange(len(foods)), per_food)
    starts = np.cumsum(per_food) - per_food
    pick = rng.choice(len(pool_desc), len(food_index), p=popularity)
    code = np.array(pool_code, dtype=object)[pick]
    desc = np.array(pool_desc, dtype=object)[pick]
    nested = rng.random(len(food_index)) < 0.04
    other = rng.integers(0, len(foods), nested.sum())
    code[nested] = foods["food_id"].to_numpy()[other]
    desc[nested] = foods["description"].to_numpy()[other]
    ingredients = pd.DataFrame({
        "food_id": foods["food_id"].to_numpy()[food_index],
        "seq": np.arange(len(food_index)) - starts[food_index] + 1,
        "ingredient_code": code, "ingredient_description": desc,
        "grams": np.round(np.exp(np.log(40) + 1.0 * rng.standard_normal(len(food_index))), 1),
    })[INGREDIENT_COLUMNS]
    return FoodTables(foods, ingredients)


# ------------------------------------------------------------------------------------- worker


def _timed(module, names: tuple[str, ...], record: dict[str, list[float]]) -> None:
    """Replace ``module.<name>`` by a wrapper that appends each call's seconds to ``record``."""
    for name in names:
        original = getattr(module, name)

        def wrapper(*args, _original=original, _name=name, **kwargs):
            start = time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                record.setdefault(_name, []).append(time.perf_counter() - start)

        setattr(module, name, wrapper)


def _tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def worker(tree: str, fraction: float, n_foods: int, seed: int, result_path: str, cores: int,
           profile: bool) -> None:
    """Runs in the subprocess: read, annotate, make foods, build; write a JSON result."""
    if cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:cores])
    rss = nhanes_scale._rss_gb
    start = time.perf_counter()
    sys.path.insert(0, str(ROOT / "src"))
    import nutrireason.ngqa.build as build_module
    from nutrireason.ngqa.config import load_ngqa_config
    from nutrireason.ngqa.foods import in_universe
    from nutrireason.ngqa.users import annotate_users
    from nutrireason.sources.nhanes import read_nhanes_dir
    from nutrireason.standards import load_standards

    result: dict = {"fraction": fraction, "import_s": time.perf_counter() - start,
                    "cpus": len(os.sched_getaffinity(0))
                    if hasattr(os, "sched_getaffinity") else None}
    start = time.perf_counter()
    tables = read_nhanes_dir(tree, prefer="P")
    result["read_s"] = time.perf_counter() - start
    result["rss_after_read_gb"] = rss()
    start = time.perf_counter()
    standards = load_standards()
    users = annotate_users(tables, standards).users
    result["annotate_s"] = time.perf_counter() - start
    result["rss_after_annotate_gb"] = rss()
    result["adults"] = len(users)
    del tables

    start = time.perf_counter()
    foods = make_food_tables(n_foods, seed)
    result["foods_make_s"] = time.perf_counter() - start
    result["foods"] = len(foods.foods)
    result["ingredient_rows"] = len(foods.ingredients)
    result["foods_in_universe"] = int(in_universe(foods.foods, load_ngqa_config()).sum())

    order = np.random.default_rng(seed).permutation(len(users))
    take = np.sort(order[: max(1, round(fraction * len(users)))])
    subset = users.iloc[take].reset_index(drop=True)
    result["users"] = len(subset)

    steps: dict[str, list[float]] = {}
    _timed(build_module, BUILD_STEPS, steps)
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    with tempfile.TemporaryDirectory(prefix="ngqa_build_") as out:
        start = time.perf_counter()
        built = build_module.build_benchmark(subset, foods, Path(out), seed=seed)
        result["build_s"] = time.perf_counter() - start
        result["out_bytes"] = _tree_bytes(Path(out))
    if profiler is not None:
        import io
        import pstats

        profiler.disable()
        for key in ("tottime", "cumulative"):
            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats(key).print_stats(18)
            result[f"profile_{key}"] = text.getvalue()
    result["rss_peak_gb"] = rss()
    result["steps"] = steps
    stats = built.stats
    result["users_with_requirements"] = stats["users_with_conditions"]
    result["question_foods"] = stats["foods"]
    result["levels"] = {level: {k: stats["levels"][level].get(k) for k in
                                ("records", "avg_nodes", "avg_edges", "yes_share")}
                        for level in LEVELS}
    result["foods_in_questions"] = int(built.questions["food_id"].nunique())
    Path(result_path).write_text(json.dumps(result))


def run_worker(tree: Path, fraction: float, args) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        result_path = Path(tmp) / "result.json"
        env = {**os.environ, "PYTHONWARNINGS": "ignore"}
        if args.cores:
            env |= {"OMP_NUM_THREADS": str(args.cores), "OPENBLAS_NUM_THREADS": str(args.cores),
                    "MKL_NUM_THREADS": str(args.cores)}
        command = [sys.executable, __file__, "--worker", str(tree), str(fraction), result_path,
                   "--foods", str(args.foods), "--seed", str(args.seed), "--cores",
                   str(args.cores)]
        if args.profile:
            command.append("--profile")
        subprocess.run([str(c) for c in command], check=True, env=env)
        return json.loads(result_path.read_text())


# --------------------------------------------------------------------------------------- main


def _steps(result: dict) -> dict[str, float]:
    """The build's steps in seconds."""
    steps = result["steps"]
    profiles = steps.get("user_profiles", [0.0])
    return {"profiles": profiles[0], "foods": sum(steps.get("question_foods", [])),
            "pairs+questions": sum(steps.get("make_questions", [])),
            "stats": sum(steps.get("statistics", [])),
            "graph": sum(steps.get("graph_tables", [])),
            "write": sum(steps.get("_write", []))}


def report(results: list[dict], write_seconds, marker) -> None:
    print(f"tree: {len(marker['files'])} XPT files, {marker['bytes'] / 1e9:.2f} GB, "
          f"{marker['params']['participants']:,d} participants, "
          f"{marker['params']['food_records']:,d} food records")
    if write_seconds is None:
        print(f"write: reused existing tree (it took {marker['write_seconds']:.1f} s)")
    else:
        print(f"write: {write_seconds:.1f} s (not part of the target)")
    first = results[0]
    print(f"foods: {first['foods']:,d} synthetic FNDDS foods, {first['ingredient_rows']:,d} "
          f"ingredient rows, made in {first['foods_make_s']:.2f} s (not counted); "
          f"{first['foods_in_universe']:,d} in the NGQA universe, {first['question_foods']:,d} "
          "after de-duplication")
    print(f"worker CPUs: {first['cpus']}  adults annotated: {first['adults']:,d}")
    print()
    head = (f"{'frac':>5} {'users':>7} {'w/ req':>7} {'sparse':>7} {'std':>6} {'cplx':>6} "
            f"{'read':>6} {'annot':>6} {'prof':>5} {'foods':>5} {'pairs':>6} {'stats':>5} "
            f"{'graph':>6} {'write':>6} {'build':>6} {'total':>6} {'peakGB':>6} {'x base':>6}")
    print(head)
    base = results[0]["build_s"]
    for r in results:
        s = _steps(r)
        total = r["read_s"] + r["annotate_s"] + r["build_s"]
        counts = [r["levels"][level]["records"] for level in LEVELS]
        print(f"{r['fraction']:>5.2f} {r['users']:>7,d} {r['users_with_requirements']:>7,d} "
              f"{counts[0]:>7,d} {counts[1]:>6,d} {counts[2]:>6,d} {r['read_s']:>6.2f} "
              f"{r['annotate_s']:>6.2f} {s['profiles']:>5.2f} {s['foods']:>5.2f} "
              f"{s['pairs+questions']:>6.2f} {s['stats']:>5.2f} {s['graph']:>6.2f} "
              f"{s['write']:>6.2f} {r['build_s']:>6.2f} {total:>6.2f} {r['rss_peak_gb']:>6.2f} "
              f"{r['build_s'] / base:>6.2f}")
    print("(seconds; build = build_benchmark = prof + foods + pairs + stats + graph + write; "
          "total = read + annotate + build; "
          f"x base = build / build at {results[0]['fraction']:.2f})")
    last = results[-1]
    total = last["read_s"] + last["annotate_s"] + last["build_s"]
    peak = last["rss_peak_gb"]
    print()
    users_ratio = last["users"] / results[0]["users"]
    print(f"growth {results[0]['fraction']:.0%} -> {last['fraction']:.0%} of users "
          f"(x{users_ratio:.1f} users): NGQA build x{last['build_s'] / base:.2f}")
    level_text = ", ".join(f"{level} {last['levels'][level]['records']:,d} (avg nodes "
                           f"{last['levels'][level]['avg_nodes']}, edges "
                           f"{last['levels'][level]['avg_edges']})" for level in LEVELS)
    print(f"questions at {last['fraction']:.0%}: {level_text}; output "
          f"{last['out_bytes'] / 1e6:.0f} MB")
    print(f"total at {last['fraction']:.0%}: {total:.2f} s  ratio to {TARGET_SECONDS:.0f} s "
          f"target: {total / TARGET_SECONDS:.2f}")
    print(f"peak RSS at {last['fraction']:.0%}: {peak:.2f} GB  ratio to {TARGET_GB:.0f} GB "
          f"target: {peak / TARGET_GB:.2f}")
    for r in results:
        for key in ("profile_tottime", "profile_cumulative"):
            if key in r:
                print(f"\n--- {key} at fraction {r['fraction']:.2f}\n{r[key]}")


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path,
                        help="raw NHANES tree (nhanes_scale.py marker); written if missing")
    parser.add_argument("--foods", type=int, default=7000, help="synthetic FNDDS foods")
    parser.add_argument("--fractions", default="0.1,0.25,0.5,1.0",
                        help="shares of the annotated users, comma-separated")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cores", type=int, default=2,
                        help="CPUs each subprocess is pinned to (0: no pinning)")
    parser.add_argument("--profile", action="store_true", help="cProfile the NGQA build step")
    parser.add_argument("--tree-seed", type=int, default=0, help="seed of a tree to write")
    parser.add_argument("--participants", type=int, default=100_000)
    parser.add_argument("--food-records", type=int, default=2_000_000)
    parser.add_argument("--worker", nargs=3, metavar=("TREE", "FRACTION", "RESULT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        args.fraction_list = sorted(float(f) for f in args.fractions.split(",") if f.strip())
    except ValueError:
        parser.error("--fractions: comma-separated numbers")
    if not args.fraction_list or not all(0 < f <= 1 for f in args.fraction_list):
        parser.error("--fractions must lie in (0, 1]")
    if args.foods < 1:
        parser.error("--foods must be at least 1")
    return args


def main(argv=None) -> int:
    args = parse(argv)
    if args.worker:
        tree, fraction, result_path = args.worker
        worker(tree, float(fraction), args.foods, args.seed, result_path, args.cores,
               args.profile)
        return 0
    temporary = args.tree is None
    root = Path(tempfile.mkdtemp(prefix="ngqa_tree_")) if temporary else args.tree.resolve()
    tree_args = nhanes_scale.parse(["--participants", str(args.participants),
                                    "--food-records", str(args.food_records),
                                    "--seed", str(args.tree_seed)])
    try:
        print(f"tree: {root}", flush=True)
        write_seconds, marker = nhanes_scale.ensure_tree(root, tree_args)
        if write_seconds is not None:
            print(f"written in {write_seconds:.1f} s", flush=True)
        results = []
        for fraction in args.fraction_list:
            print(f"fraction {fraction:.2f}: read + annotate + build ...", flush=True)
            results.append(run_worker(root, fraction, args))
        report(results, write_seconds, marker)
    finally:
        if temporary:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
