"""Small facts of French spelling that no source package states in a usable form."""
import re

# Words whose initial h is aspirated: no elision, no liaison (le héros, la hache, je hais).
# Hunspell accepts l' before all of them, so this list decides.
H_ASPIRE = set("""
hache hachette hachis haie haillon haine haïr halage hâle haler haleter hall halle hallebarde halo
halte hamac hamburger hameau hamster hanche handball handicap handicaper hangar hanneton hanter
happer harangue harasser harceler hardi hardiesse harem hareng hargne hargneux haricot harnais
harpe harpon hasard hasarder hâte hâter hâtif hausse hausser haut hautain hautbois hauteur
havre hennir hérisser hérisson hernie héron héros herse hêtre heurt heurter hibou hideux hiérarchie
hisser hobby hochement hocher hockey hollandais homard hongrois honte honteux hoquet horde hors
hot-dog hotte houblon houille houle houppe housse houx hublot huche huer huée huit huitième
hululer humer hune huppe hurlement hurler hutte hyène
""".split())

VOWEL_START = re.compile(r"^[aeiouàâäéèêëîïôöûüœæ]", re.I)


def elides(word):
    """True when le/la/je/de before `word` lose their vowel (l'arbre, l'homme, j'aime)."""
    w = word.lower()
    if VOWEL_START.match(w):
        return True
    if w.startswith("y"):
        return len(w) > 1 and w[1] not in "aeiouéèêàâ" and w not in ("yeux",)
    if w.startswith("h"):
        first = w.split(" ")[0].split("-")[0]
        return first not in H_ASPIRE
    return False


# Plurals that hunspell lists as separate words, not as inflections of the singular.
NOUN_PLURAL = {"œil": "yeux", "ciel": "cieux", "monsieur": "messieurs", "madame": "mesdames",
               "mademoiselle": "mesdemoiselles", "bonhomme": "bonshommes", "aïeul": "aïeux"}


def noun_plural_rule(noun):
    if re.search(r"[sxz]$", noun):
        return noun
    if re.search(r"(au|eu|eau)$", noun) and noun not in ("pneu", "bleu"):
        return noun + "x"
    if noun.endswith("al") and noun not in ("bal", "carnaval", "festival", "chacal", "récital", "régal"):
        return noun[:-2] + "aux"
    return noun + "s"


# Adjectives that normally stand before the noun (beauty, age, goodness, size, rank).
BEFORE_NOUN = set("""
beau joli jeune vieux nouveau bon mauvais meilleur petit grand gros long haut bref gentil
premier deuxième troisième dernier autre même vrai faux double court
""".split())
