"""Token scoring may only name an SR28 entry whose head noun and kind the line names.

Lines are written for these tests (not copied from any corpus); the wrong entries are the ones
token scoring had picked before the guard, the right ones looked up by hand in SR28 FOOD_DES,
with the reason beside each.
"""

from __future__ import annotations

import pytest

from nutrireason.recipes.lines import first_alternative
from nutrireason.recipes.match import description_kind, species_meat
from nutrireason.recipes.parse import line_states


@pytest.mark.parametrize(("description", "heads", "kinds"), [
    ("Taro leaves, raw", {"leaf"}, [["taro"]]),  # stems fold "leaves" to "leaf"
    ("Fish, pike, walleye, raw", {"fish", "pike"}, [["pike"]]),
    ("Spices, pepper, black", {"spice", "pepper"}, [["pepper", "black"]]),
    ("Beef, variety meats and by-products, tripe, cooked, simmered", {"beef", "tripe"},
     [["tripe"]]),
    ("Yogurt, vanilla or lemon flavor, nonfat milk", {"yogurt", "flavor"},
     [["vanilla"], ["lemon"]]),
    ("Cereals ready-to-eat, rice, puffed, fortified", {"cereal", "rice"}, [["rice"]]),
])
def test_description_kind(description, heads, kinds):
    assert description_kind(description) == (heads, kinds)


@pytest.mark.parametrize(("line", "wrong", "why"), [
    ("12 banana leaves", "Taro leaves, raw", "banana leaves are no taro leaves"),
    ("2 pounds bonga fish fillets", "Fish, burbot, raw", "bonga is no burbot"),
    ("4 whole pigeons", "Pigeon peas (red gram), mature seeds, raw", "a bird is no pea"),
    ("1 cup tiger nuts", "Nuts, pistachio nuts, raw", "tiger nuts are tubers, not pistachios"),
    ("1 tsp mixed spices", "Spices, paprika", "a spice mix is no paprika"),
    ("2 fresh peppers", "Spices, pepper, black", "fresh peppers are no black pepper"),
    ("1 kg hilsa fish", "Fish, fish sticks, frozen, prepared", "a whole fish is no fish stick"),
    ("2 cups (480 ml) milk or half and half",
     "Pork, fresh, leg (ham), rump half, separable lean only, raw",
     "'milk or half and half' is milk, and 'half' is no ham"),
])
def test_token_scoring_refuses_another_food(resolver, line, wrong, why):
    assert resolver.ingredient(line).sr28_description != wrong, why


@pytest.mark.parametrize(("text", "expected"), [
    ("generous ½ cup semisweet or bittersweet chocolate chips",
     "generous ½ cup semisweet chocolate chips"),
    ("2 quarts peanut or canola oil for deep-frying", "2 quarts peanut oil"),
    ("About ¼ cup vegetable or olive oil", "About ¼ cup vegetable oil"),
    ("2 cups milk or half and half", "2 cups milk"),
    ("250 g smoked or fresh salmon", "250 g smoked salmon"),
])
def test_alternatives_share_their_noun(text, expected):
    assert first_alternative(text) == expected


def test_species_meat():
    assert species_meat("goat meat") == "goat"
    assert species_meat("meat") is None


@pytest.mark.parametrize(("text", "dried"), [
    ("1 kg diced venison, rinsed and dried", False),
    ("2 lb chicken thighs, patted dry", False),
    ("1 cup dried apricots", True),
])
def test_patted_dry_is_no_dried_food(text, dried):
    assert ("dried" in line_states(text)) is dried


@pytest.mark.parametrize(("text", "expected", "why"), [
    ("2 cups water or beef broth", "2 cups water", "water takes no other food's noun"),
    ("4 tbsp yogurt or sour cream", "4 tbsp yogurt", "yogurt stands alone"),
    ("4 oz milk or semi-sweet chocolate chunks", "4 oz milk chocolate chunks",
     "'milk chocolate' is a reviewed name: milk is the chocolate's kind here"),
    ("8 oz cream or goat cheese", "8 oz cream cheese", "'cream cheese' is a reviewed name"),
    ("Butter or home-rendered lard", "Butter", "'butter lard' is no food"),
])
def test_standalone_foods_keep_their_own_name(text, expected, why):
    assert first_alternative(text) == expected, why


@pytest.mark.parametrize(("line", "why"), [
    ("1 oz dried porcini mushrooms", "SR28's only porcini-like entry is fresh white mushrooms"),
    ("1 teaspoon dried ground orange peel", "SR28's orange peel is raw (73 % water)"),
])
def test_dried_produce_is_not_the_fresh_entry(resolver, line, why):
    item = resolver.ingredient(line)
    assert item.ndb_no is None and "no SR28 entry for dried" in (item.problem or ""), why


@pytest.mark.parametrize(("line", "why"), [
    ("2 lb lamb steaks", "lamb steaks are lamb, never the reviewed beef 'steaks'"),
    ("1 Tbsp fish oil", "fish oil is no soybean oil"),
    ("1½ cups pork broth", "pork broth is no chicken broth"),
    ("4 cups black lentil flour", "lentil flour is no wheat flour (celiac labels)"),
    ("1 kg palm nut cream", "palm nut cream is no dairy cream"),
])
def test_a_kind_word_before_a_reviewed_name_is_another_food(resolver, line, why):
    item = resolver.ingredient(line)
    assert not (item.sr28_description or "").startswith(("Beef", "Oil, soybean", "Soup, chicken",
                                                         "Wheat flour", "Cream")), why


def test_three_or_four_cups_is_one_amount():
    assert first_alternative("3 or 4 cups water") == "3 or 4 cups water"


def test_a_can_without_a_can_portion_is_not_one_piece(resolver):
    """"1 can pears" was SR28's "1 half, with liquid" (76 g); SR28 has no can of pears, so it
    is the standard 15 oz can."""
    item = resolver.ingredient("1 can pears")
    assert item.grams == 425.0 and item.grams_method == "standard_weight:1 can=425 g"


def test_wiki_quote_markup_is_noise(resolver):
    """Wikibooks lines carry '''bold''' and ''italic'' quotes: "'''or'''" is the word "or", so
    the line's first alternative is the broth, not "chicken broth water ... stock" (which had
    matched 516 g of dry broth cubes)."""
    line = ("½ litre (2 cups) of chicken broth (canned or homemade) '''or''' ½ litre of water "
            "and 2 good-quality chicken stock cubes")
    assert resolver.ingredient(line).sr28_description == "Soup, chicken broth, ready-to-serve"
    assert resolver.ingredient("2 cups pre-cooked rice, (cooled)").sr28_description == \
        "Rice, white, long-grain, regular, enriched, cooked"


@pytest.mark.parametrize(("text", "expected"), [
    ("2 cups kidney, black, or pinto beans", "2 cups kidney beans"),
    ("Vegetable, corn, or canola oil", "Vegetable oil"),
    ("2 lemons, juiced, or 4 tbsp lemon concentrate", "2 lemons, juiced"),
])
def test_a_comma_list_of_kinds_shares_the_noun(text, expected):
    assert first_alternative(text) == expected


@pytest.mark.parametrize(("line", "description", "why"), [
    # token scoring keeps the food
    ("1 lb (450 g) ground bison meat", "Game meat , bison, ground, raw",
     "'Game meat' is a category: bison is the kind"),
    ("500 g beef kidneys", "Beef, variety meats and by-products, kidneys, raw",
     "'variety meats and by-products' says nothing; kidneys are the kind"),
    ("1 lb lamb meat", "Lamb, domestic, composite of trimmed retail cuts, "
     "separable lean and fat, trimmed to 1/4\" fat, choice, raw",
     "lamb meat is the reviewed lamb, not lamb brain"),
    ("1 lb lamb meat, cut into cubes", "Lamb, domestic, composite of trimmed retail cuts, "
     "separable lean and fat, trimmed to 1/4\" fat, choice, raw",
     "cubed lamb meat is lamb with its fat, not lamb brain"),
    ("2 quarts peanut or canola oil for deep-frying", "Oil, peanut, salad or cooking",
     "the oil both alternatives share, not raw peanuts"),
    ("1 can (10 oz) condensed cream of chicken soup", "Soup, cream of chicken, canned, "
     "condensed", "'of' says no kind: cream of chicken, not chicken vegetable soup"),
    ("½ kg liver", "Beef, variety meats and by-products, liver, raw",
     "reviewed: liver of no named animal is beef liver, not liver cheese"),
    ("Fresh grape leaves", "Grape leaves, raw", "reviewed: the slicer drops 'grape'"),
    # dried foods find their dried entry
    ("¼ cup dried cherries", "Cherries, tart, dried, sweetened",
     "reviewed: dried cherries for baking are sweetened dried tart cherries"),
    ("100 g dried dates", "Dates, deglet noor", "SR28's dates are already dried (282 kcal)"),
    ("1 cup dried lima beans", "Lima beans, large, mature seeds, raw",
     "reviewed: dried lima beans are the mature seeds, not the immature green ones"),
    ("3 dried arbol chiles, stemmed", "Peppers, hot chile, sun-dried",
     "reviewed: a dried chile is the sun-dried entry, not a fresh green chili"),
    # purpose batch and amount alternatives
    ("Vegetable oil, to fry", "Oil, soybean, salad or cooking",
     "what a food is for ('to fry') is set aside, not read as a food word"),
    ("1 large corn muffin", "Muffins, corn, commercially prepared",
     "reviewed; the slicer's fuller name ('corn muffin') is tried before its short one"),
    ("1 recipe all-butter pie crust", "Pie crust, refrigerated, regular, unbaked",
     "'1 recipe' is a batch, not SR28's 'prepared from recipe'; butter in a crust is no food"),
    ("1 cup heavy whipping cream or 1/2 cup whole milk", "Cream, fluid, heavy whipping",
     "an alternative with its own amount is another line's food"),
    # qualifiers and packs
    ("8 oz (2 sticks) butter, unsalted", "Butter, without salt",
     "unsalted asks for no salt, not also for SR28's light butter"),
    ("1 cup fat-free milk", "Milk, nonfat, fluid, with added vitamin A and vitamin D (fat free or "
     "skim)", "fat-free is the nonfat entry, not 1 % milk nor fat-free chocolate milk"),
    ("1 can (28 oz) unsalted whole peeled tomatoes",
     "Tomatoes, red, ripe, canned, packed in tomato juice, no salt added",
     "unsalted is a low-sodium qualifier"),
    ("14.5 oz canned diced tomatoes in juice",
     "Tomatoes, red, ripe, canned, packed in tomato juice", "'in juice' is no tomato juice"),
    ("1 can (400 g) peaches (in natural juice)",
     "Peaches, canned, juice pack, solids and liquids",
     "a canned fruit finds its canned entry although the raw one names a colour"),
    # packs and product heads
    ("1 can peaches in syrup", "Peaches, canned, heavy syrup pack, solids and liquids",
     "a line that says syrup is not penalised into the water pack, nor drained unasked"),
    ("Roughly 2 cups custard", None, "custard is no custard-apple (the apple's kind there)"),
    # canned and roasted siblings
    ("2 cans (32 oz total) beets", "Beets, canned, regular pack, solids and liquids",
     "canned beets are not SR28's pickled beets"),
    ("1 can (14.5 oz) stewed tomatoes", "Tomatoes, red, ripe, canned, stewed",
     "a cooking word the line says is no penalty"),
    ("3 cups shredded rotisserie chicken", "Chicken, broilers or fryers, meat only, roasted",
     "rotisserie chicken is roasted (and shredded, its meat only)"),
    # birds, eggs and fish named by their kind
    ("1 fried chicken egg (sunny side-up)", "Egg, whole, cooked, fried",
     "a chicken egg is an egg, not fried chicken"),
    ("6 chicken fillets, cut into 2 cm pieces",
     "Chicken, broiler or fryers, breast, skinless, boneless, meat only, raw",
     "a chicken fillet is a breast fillet, not half a bird (SR28's '0.5 chicken' portion)"),
    ("1 whole chicken, cut into pieces (breast cut into 4 pieces)",
     "Chicken, broilers or fryers, meat and skin, raw",
     "a cut named in the parenthesis of a whole bird does not make it that cut"),
    ("1 side (1.5-2 lb) of sockeye salmon", "Fish, salmon, sockeye, raw",
     "fresh sockeye, not the canned entry the token score preferred"),
    ("1 lb king salmon fillet", "Fish, salmon, chinook, raw",
     "king salmon is chinook, not the Alaska Native entry"),
    ("1 ea. (5-6 lb) fat hen", "Chicken, stewing, meat and skin, raw",
     "a fat hen is a stewing hen"),
    ("1 lb shrimp, peeled", "Crustaceans, shrimp, raw (not previously frozen)",
     "shrimp as it is, not SR28's phosphate-soaked 'may have been previously frozen' entry"),
    ("1 lb frozen shrimp, thawed",
     "Crustaceans, shrimp, mixed species, raw (may have been previously frozen)",
     "frozen retail shrimp is the soaked entry"),
    ("9 oz cheese tortellini",
     "Tortellini, pasta with cheese filling, fresh-refrigerated, as purchased",
     "a filled pasta is no cheese: the sub-phrase 'cheese' had taken cheddar"),
    ("500 g potato gnocchi", None, "gnocchi are no raw potatoes (SR28 has no gnocchi)"),
    # the pot, the soak or the instruction, not a can or the cooked entry
    ("2 cups cooked adzuki beans, drained",
     "Beans, adzuki, mature seeds, cooked, boiled, without salt",
     "a cooked line's draining is the pot's, not a can (it had been canned, sweetened)"),
    ("2 cups dried chickpeas, soaked and drained",
     "Chickpeas (garbanzo beans, bengal gram), mature seeds, raw",
     "dried chickpeas drained of their soak are the dry seeds, not canned ones"),
    ("1 pound canned clams, minced", "Mollusks, clam, mixed species, canned, drained solids",
     "canned clams are the clams, not SR28's canning liquid (2 kcal per 100 g)"),
    ("1 pound penne pasta, cooked al dente and drained", "Pasta, dry, enriched",
     "a pound of pasta to cook is weighed dry; 'cooked' after it is the instruction"),
    ("8 ounces dry penne pasta, cooked according to package directions",
     "Pasta, dry, enriched", "the line says dry; the cooking is what to do"),
    ("1 lb cooked pasta", "Pasta, cooked, enriched, without added salt",
     "cooked before the food: the pasta is weighed cooked"),
    ("1 cup (600 g) basmati rice, cooked",
     "Rice, white, long-grain, regular, enriched, cooked",
     "a cup of dry rice cooks to 600 g: grams in parentheses beside a cup are the cooked rice"),
    # cured, candied and trade names
    ("1 lb chipped beef", "Beef, cured, dried", "chipped beef is cured and dried"),
    ("150 g salted pork", "Pork, cured, salt pork, raw", "salted pork is salt pork"),
    ("3 big sour-salted (pickled) cucumbers", "Pickles, cucumber, sour",
     "brined cucumbers are not fresh ones"),
    ("200 g dry vermicelli", "Pasta, dry, enriched", "wheat vermicelli, not soy vermicelli"),
    ("2 slices brown bread", "Bread, whole-wheat, commercially prepared",
     "British brown bread, not canned Boston brown bread"),
    ("1 hot banana pepper, seeded", "Peppers, hungarian, raw", "a banana pepper is no banana"),
    ("2 cups canned French fried onions", None, "the fried-onion topping is not canned onions"),
    ("4 lb chicken carcasses", None, "bones for stock are not eaten as meat"),
    ("1 cup 2% fat Greek yogurt", "Yogurt, Greek, plain, lowfat", "'2% fat' is reduced fat"),
    ("1 can (20 oz) pineapple chunks in unsweetened juice",
     "Pineapple, canned, juice pack, solids and liquids",
     "'in unsweetened juice' is the packing, not frozen juice concentrate"),
    ("3 cups fresh escarole", "Endive, raw", "fresh escarole is raw, not boiled"),
    ("300 g hot rice", "Rice, white, long-grain, regular, enriched, cooked",
     "hot rice is cooked rice"),
    ("1 cup homemade chicken or vegetable broth", "Soup, chicken broth, ready-to-serve",
     "'homemade' is no food word: the two share 'broth' (it had been raw chicken)"),
    ("2 cups all-purpose flour (you can use whole grain, but softer wheat is better)",
     "Wheat flour, white, all-purpose, enriched, bleached",
     "a qualifier 'you can use' is an option, not the flour"),
    ("water for soaking rice", "Beverages, water, tap, drinking",
     "what the water is for is no food"),
    ("4 thick-cut ribeye steaks", "Beef, rib eye steak/roast, boneless, lip-on, separable lean "
     "and fat, trimmed to 1/8\" fat, all grades, raw",
     "SR28 spells the cut 'rib eye'; its 'ribeye cap' is one lean-only muscle"),
    ("128 ounces white grape juice",
     "Grape juice, canned or bottled, unsweetened, without added ascorbic acid",
     "grape juice, not an apple-grape blend"),
    ("6 salad onions, sliced", "Onions, spring or scallions (includes tops and bulb), raw",
     "British salad onions are spring onions"),
    ("1 box (482 g) chocolate sprinkles", None, "sprinkles are not dark chocolate"),
    ("1 pound shredded boiled chicken meat", "Chicken, broilers or fryers, meat only, stewed",
     "boiled meat is SR28's stewed (moist heat), not fried"),
    ("2 slices smoked mozzarella cheese", "Cheese, mozzarella, whole milk",
     "smoking flavours a cheese; the token score had taken nonfat mozzarella"),
    ("1 cup shredded part-skim mozzarella", "Cheese, mozzarella, low moisture, part-skim",
     "parsed as 'skim mozzarella', which found no food"),
    ("3 teaspoons milk (whole fat milk is best, but part skim would be fine)",
     "Milk, whole, 3.25% milkfat, with added vitamin D",
     "a qualifier offered as what 'would be fine' is an option, not the food"),
])
def test_line_matches_its_entry(resolver, line, description, why):
    assert resolver.ingredient(line).sr28_description == description, why
