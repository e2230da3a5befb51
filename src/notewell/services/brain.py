"""The External Brain: coding sessions, taught knowledge and the confidence loop (docs/brain.md).

``BrainService`` is the one facade the runtime builds and the doors call (``rt.brain.<method>``); it is
composed of the concept parts, each in its own module:

- brain_scope      the caller's projects, the project a request goes to, the sessions that are theirs
- brain_knowledge  teach, list and retire knowledge; resolve action items
- brain_retrieval  retrieve for a prompt, skills, the user's style
- brain_sessions   open, log, close (the confidence loop, close-capture of learnings), find sessions
- brain_health     the loop's health: the seed's signals, per person or for the team
- kea, kea_cross   the learning loop's jobs: a closed session's extraction, the daily cross-session one
- brain_evolution  nightly evolution: idle knowledge decays, retires below the floor; restore undoes it
- autoskill        proposed edits to recipes (merge, demote, add steps), applied when their owner accepts

Every method takes a Principal and needs the ``sessions`` scope; who may do what is the policy's, asked
through Authorization. The limits are brain_limits', the numbers brain_scoring's, the oracle brain_oracle's.
"""

from __future__ import annotations

from notewell.services.brain_evolution import EvolutionPart
from notewell.services.brain_health import HealthPart
from notewell.services.brain_sessions import SessionsPart
from notewell.services.kea_cross import KeaCrossPart


class BrainService(SessionsPart, HealthPart, KeaCrossPart, EvolutionPart):
    """Projects, sessions, knowledge and retrieval of the External Brain, for one store."""
