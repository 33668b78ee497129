"""Hand-written point/counter pairs (not from counterargs-18) for the example files; run to regenerate them."""

import json
from pathlib import Path

PAIRS = [
    ("School uniforms reduce bullying because nobody can be mocked for cheap clothes.",
     "Bullies simply find other targets such as shoes, hair or phones; uniforms do not remove the motive."),
    ("Homework reinforces what pupils learn in class and builds discipline.",
     "Evidence links heavy homework to stress, not learning, and it penalises children without a quiet home."),
    ("A sugar tax cuts obesity by making sweet drinks more expensive.",
     "Consumers switch to untaxed snacks, and the tax hits poor families hardest without changing diets."),
    ("Nuclear power is the only reliable low-carbon source of baseload electricity.",
     "Storage and grids now balance renewables, and new reactors take decades and cost far more per unit."),
    ("Voting should be compulsory so that governments represent everyone.",
     "Forcing uninterested citizens to vote adds random ballots, not informed representation."),
    ("Zoos protect endangered species through breeding programmes.",
     "Most zoo animals are not endangered, and captive breeding rarely leads to release into the wild."),
    ("Social media companies must remove hate speech quickly to protect users.",
     "Fast removal rules make platforms delete lawful speech to avoid fines, chilling legitimate debate."),
    ("Space exploration drives technological progress that benefits everyone.",
     "The same money spent directly on research on Earth would yield more useful technology."),
    ("A four-day working week raises productivity because rested staff work better.",
     "Trials were short and self-selected; many services such as hospitals cannot compress their hours."),
    ("Banning cars from city centres cleans the air and makes streets safer.",
     "Bans push traffic to the edges and hurt disabled people and small shops that rely on car access."),
    ("Free university tuition opens higher education to poorer students.",
     "Free tuition mostly subsidises the middle class; grants targeted at poor students do more."),
    ("Animal testing is necessary to make medicines safe for humans.",
     "Animal results often fail to predict human reactions, and cell models and simulations now do better."),
    ("Minimum wage rises lift workers out of poverty.",
     "Higher wage floors lead employers to cut hours and jobs for the least skilled."),
    ("Online voting would increase turnout among young people.",
     "Internet voting cannot guarantee secrecy or resist hacking, undermining trust in the result."),
    ("Professional athletes deserve their high salaries because they generate huge revenues.",
     "Revenue comes from the sport as a whole; a few stars capture it while most players earn little."),
    ("Plastic bag charges sharply reduce litter.",
     "Litter from bags was a small share of waste; the charge changes habits little beyond the first months."),
]

VAL = [
    ("Standardised tests measure pupils fairly against one benchmark.",
     "Tests reward expensive coaching and narrow teaching to the test rather than real understanding."),
    ("Renewable subsidies are needed to fight climate change.",
     "Subsidies lock in today's technologies; a carbon price lets the cheapest cuts happen first."),
    ("Public libraries are outdated in the age of the internet.",
     "Libraries give free internet access, quiet space and help to people who have none at home."),
    ("Violent video games make young people aggressive.",
     "Large studies find no lasting link between games and violence; youth crime fell as gaming grew."),
    ("Tourism brings jobs and money to poor regions.",
     "Much tourist spending flows to foreign hotel chains, while locals face higher prices and crowding."),
    ("Genetically modified crops can end hunger.",
     "Hunger is caused by poverty and distribution, not by a shortage of food production."),
]

if __name__ == "__main__":
    here = Path(__file__).parent
    for name, rows in (("train.jsonl", PAIRS), ("val.jsonl", VAL)):
        with open(here / name, "w", encoding="utf-8") as fh:
            for p, c in rows:
                fh.write(json.dumps({"point": p, "counter": c}) + "\n")
    texts = [t for pair in PAIRS + VAL for t in pair]
    (here / "candidates.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    (here / "queries.txt").write_text("\n".join(p for p, _ in VAL) + "\n", encoding="utf-8")
