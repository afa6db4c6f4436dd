"""The CloudFormation/SAM engine: a template deployed into the local account as
CloudFormation deploys a stack.

Reading a template (:mod:`.template`: parse, :mod:`.parameters` as ``sam deploy`` resolves
them, :mod:`.intrinsics` and conditions), the SAM transform first (:mod:`.transform`:
``samtranslator``, local ``CodeUri``/``DefinitionUri`` carried through it as SAM CLI
carries them), then plain CloudFormation: one provider per resource type, each service's
own, handed in (:mod:`.provider`: the contract and the deployment it creates into),
creation in dependency order (:mod:`.deployer`), updates in place and
deletes (:mod:`.update`), the stack as ``DescribeStacks`` and ``DescribeStackResources``
show it (:mod:`.stacks`), and ``sam deploy``'s change sets with CloudFormation's rollback
semantics (:mod:`.changesets` the API, :mod:`.changes` what a set would do,
:mod:`.execution` doing it). What the engine does not emulate is refused by name
(:mod:`.exceptions`), never half-created. The CloudFormation API's own moto patches
(application change sets for ``sam deploy``) are :mod:`.api`.

May import: :mod:`localcloud.patches`, :mod:`localcloud.text`; it knows no service: the
providers are given to it.
"""
